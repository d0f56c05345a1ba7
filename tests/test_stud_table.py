"""A stud hand at the table, through the simulated antennas: up cards seen as up and public, down cards on the secure
feed only, the bring-in and who acts first announced, the deck run short on seventh street, and the deal's
irregularities as the rule books give them (each test quotes its rule)."""

from __future__ import annotations

import pytest

from controller.cards import FULL_DECK
from controller.game import GameController
from controller.rules import PROFILES
from controller.table import TableSetup
from hal.zones import DebounceSettings
from sim.stud_hands import stud_zones
from sim.table_driver import TableDriver, of

DECK = {f"E0040150C3{i + 1:06X}": card for i, card in enumerate(FULL_DECK)}
READ = DebounceSettings(2, 0.6, move_after_cycles=3)


def table(players=(1, 2, 3), game="stud", rules="tda") -> TableDriver:
    setup = TableSetup("stud-1", 8, DECK, hole_cards=7, players=players, variant=game, rules=rules)
    return TableDriver(GameController(setup), stud_zones(), deck=DECK, debounce=READ, move_s=0.3)


def third_street(t: TableDriver, hands: dict[int, str]) -> None:
    """Two down cards and the door card up, one round at a time from seat 1."""
    for r in range(3):
        for seat, cards in hands.items():
            t.put(cards.split()[r], f"seat{seat}.{'up' if r == 2 else 'cards'}")


def street(t: TableDriver, burn: str, cards: dict[int, str], up: bool = True) -> None:
    t.put(burn, "burn")
    for seat, card in cards.items():
        t.put(card, f"seat{seat}.{'up' if up else 'cards'}")


def codes(t: TableDriver) -> list[str]:
    return [e.public["code"] for e in of(t.events, "irregular_card")]


def test_up_cards_are_public_down_cards_secure_only_and_the_table_says_who_opens_each_street():
    t = table()
    third_street(t, {1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    street(t, "Ac", {1: "Jh", 2: "8c", 3: "2h"})
    street(t, "Ad", {1: "Th", 2: "8d", 3: "3h"})
    street(t, "Ah", {1: "Jd", 2: "5c", 3: "4h"})
    street(t, "Kc", {1: "Qc", 2: "2c", 3: "5h"}, up=False)
    public = [e for e in t.published() if e["type"] == "card_dealt"]
    secure = [e for e in t.published(secure=True) if e["type"] == "card_dealt"]
    # what a viewer of the public feed sees of seat 1: its up cards, never its down cards
    assert [(e["street"], e["up"], e.get("card")) for e in public if e["seat"] == 1] == [
        ("third", False, None), ("third", False, None), ("third", True, "9c"), ("fourth", True, "Jh"),
        ("fifth", True, "Th"), ("sixth", True, "Jd"), ("seventh", False, None)]
    assert [e["card"] for e in secure if e["seat"] == 1] == "As Kd 9c Jh Th Jd Qc".split()
    # the lowest door card brings it in: the 2 of diamonds (PP Ties 1 suits only break ties)
    assert [(e.public["seat"], e.public["card"]) for e in of(t.events, "bring_in")] == [(2, "2d")]
    # the best hand showing acts first: king high on fourth street, then seat 2's eights, then seat 1's jacks
    assert [(e.public["street"], e.public["seat"]) for e in of(t.events, "first_to_act")] == [
        ("fourth", 3), ("fifth", 2), ("sixth", 1), ("seventh", 1)]
    assert codes(t) == []


def test_a_viewer_joining_mid_hand_sees_each_seats_up_cards_in_the_public_snapshot():
    from test_schemas import problems  # noqa: PLC0415 (the contract's validators)

    t = table()
    third_street(t, {1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    street(t, "Ac", {1: "Jh", 2: "8c", 3: "2h"})
    public, secure = t.controller.snapshot(secure=False), t.controller.snapshot(secure=True)
    assert public["phase"] == "fourth"
    assert [(s["seat"], s["cards"], s["up_cards"]) for s in public["seats"][:3]] == [
        (1, 4, ["9c", "Jh"]), (2, 4, ["2d", "8c"]), (3, 4, ["Ks", "2h"])]
    assert "hole_cards" not in public["seats"][0] and secure["seats"][0]["hole_cards"] == ["As", "Kd", "9c", "Jh"]
    for name, snap in (("snapshot.public.schema.json", public), ("snapshot.secure.schema.json", secure)):
        assert not problems(name, {**snap, "epoch": "stud-snapshot", "deck": "A"})  # (as the daemon publishes it)


def test_razz_brings_it_in_with_the_highest_door_card():
    t = table(game="razz")
    third_street(t, {1: "As Kd 9c", 2: "3s 4s Kh", 3: "6h 7h 2h"})
    assert [e.public["seat"] for e in of(t.events, "bring_in")] == [2]  # the king of hearts, aces low


@pytest.mark.parametrize("rules", PROFILES)
def test_a_first_card_dealt_face_up_is_a_misdeal_the_floor_confirms(rules):
    """PP Misdeals 1a: "The first or second card of the hand has been dealt face-up" (CA GR 9c; AC 30a)."""
    t = table(rules=rules)
    t.put("As", "seat1.up")  # seat 1's first card, face up
    [irregular] = of(t.events, "irregular_card", "stud_first_cards_up")
    assert irregular.public["ruling"] == "misdeal" and irregular.public["needs_floor"]
    assert irregular.public["card"] == "As"  # face up: everyone saw it
    assert {"PP Misdeals 1a", "CA GR 9c", "AC 30a"} <= set(irregular.public["rules"])
    t.command("confirm", irregularity=irregular.seq)
    assert [e.public["reason"] for e in of(t.events, "misdeal")] == ["stud_first_cards_up"]


def test_a_door_card_dealt_down_plays_and_turned_up_by_the_dealer_it_shows():
    t = table()
    for card, zone in (("As", "seat1.cards"), ("3s", "seat2.cards"), ("6h", "seat3.cards"), ("Kd", "seat1.cards"),
                       ("4s", "seat2.cards"), ("7h", "seat3.cards")):
        t.put(card, zone)
    t.put("9c", "seat1.up")
    t.put("2d", "seat2.cards")  # seat 2's door card, face down
    [irregular] = of(t.events, "irregular_card", "stud_up_card_down")
    assert (irregular.public["ruling"], irregular.public["seats"]) == ("play_on", [2])
    t.put("Ks", "seat3.up")
    t.put("2d", "seat2.up")  # the dealer turns it up
    street(t, "Ac", {1: "Jh", 2: "2c", 3: "2h"})
    # seat 2 shows 2d 2c: a pair, the best hand showing
    assert [(e.public["street"], e.public["seat"]) for e in of(t.events, "first_to_act")] == [("fourth", 2)]


def test_seventh_street_dealt_face_up_plays_as_it_lies():
    """PP Misdeals 2: after action no misdeal; the books name no remedy for the card itself."""
    t = table(players=(1, 2))
    third_street(t, {1: "As Kd 9c", 2: "3s 4s 2d"})
    for burn, cards in (("Ac", ("9h", "8c")), ("Ad", ("Th", "8d")), ("Ah", ("Jd", "5c"))):
        street(t, burn, {1: cards[0], 2: cards[1]})
    street(t, "Kc", {1: "Qc"}, up=False)
    t.put("2c", "seat2.up")  # seat 2's last card, face up
    [irregular] = of(t.events, "irregular_card", "stud_down_card_up")
    assert irregular.public["ruling"] == "play_on" and irregular.public["card"] == "2c"
    last = [e for e in t.published() if e["type"] == "card_dealt"][-1]
    assert (last["seat"], last["street"], last["up"], last["card"]) == (2, "seventh", True, "2c")
    t.try_command("misdeal")
    _events, refusal = t.try_command("misdeal")
    assert refusal is not None and "misdeal can no longer be called" in refusal


def test_a_card_to_the_wrong_seat_moved_on_to_the_seat_due_it_is_fixed():
    """PP Misdeals 1e: "This can be fixed only if the player with the incorrect number is the next player"."""
    t = table()
    third_street(t, {1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    street(t, "Ac", {1: "9h"})
    t.put("8c", "seat1.up")  # seat 2's card, on seat 1's up cards
    [irregular] = of(t.events, "irregular_card", "stud_card_wrong_seat")
    assert irregular.public["seats"] == [1, 2]
    t.put("8c", "seat2.up")  # moved on
    assert [(e.public["irregularity"], e.public["resolution"]) for e in of(t.events, "irregularity_resolved")] == [
        (irregular.seq, "fixed")]
    t.put("2h", "seat3.up")
    assert [e.public["seat"] for e in of(t.events, "card_dealt")][-2:] == [2, 3]
    assert [(e.public["street"], e.public["seat"]) for e in of(t.events, "first_to_act")] == [("fourth", 1)]


def test_mixing_an_up_card_with_the_down_cards_kills_the_hand_once_the_floor_confirms():
    """PP Dead hands 1c: "While playing stud, if you are confronted with a bet, you ... mix your up-cards with your
    down-cards"; the floor knows whether a bet was faced."""
    t = table()
    third_street(t, {1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.put("9c", "seat1.cards")
    [irregular] = of(t.events, "irregular_card", "stud_up_cards_mixed")
    assert (irregular.public["ruling"], irregular.public["rules"][0]) == ("dead_hand", "PP Dead hands 1c")
    t.command("confirm", irregularity=irregular.seq)
    [ruling] = of(t.events, "floor_ruling")
    assert (ruling.public["result"], ruling.public["seats"]) == ("dead_hand", [1])


def test_eight_players_and_the_deck_run_short_the_last_card_is_the_community_card():
    seats = tuple(range(1, 9))
    t = table(players=seats)
    deck = list(FULL_DECK)
    third_street(t, {s: " ".join(deck[3 * (s - 1):3 * s]) for s in seats})
    rest = deck[24:]
    for _street in ("fourth", "fifth", "sixth"):
        street(t, rest.pop(0), {s: rest.pop(0) for s in seats})
    assert len(rest) == 1  # 24 + 3 × 9 cards: one left for eight players
    t.put(rest[0], "board")
    [short] = of(t.events, "irregular_card", "deck_short")
    assert short.public["cards_left"] == 1 and short.public["live_seats"] == list(seats)
    [community] = of(t.events, "board_card")
    assert (community.public["card"], community.public["street"]) == (rest[0], "seventh")
    t.clear()
    t.run(2.5)
    [ended] = of(t.events, "hand_ended")
    assert ended.public["board"] == [rest[0]] and ended.public["live_seats"] == list(seats)
    # each hand is six cards of its own and the community card: seat 8's T-J-Q and K with the community ace, a
    # straight, beats seat 5's three aces (two of its own and the community ace)
    [showdown] = of(t.events, "showdown")
    assert showdown.public["winners"] == [8]


def test_a_board_card_while_the_deck_is_not_short_has_no_place_in_stud():
    t = table()
    third_street(t, {1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.put("Qd", "board")
    assert codes(t) == ["board_card_in_stud"] and of(t.events, "board_card") == []



def test_in_a_mixed_game_the_stud_hand_is_dealt_from_the_dealers_left_whatever_the_button():
    """TDA 4: the button is frozen through the stud round; a stud hand is dealt from the first seat on."""
    from controller.rotation import Game, RotationSetup  # noqa: PLC0415

    games = RotationSetup((Game("flhe", "FLHE", 2), Game("razz", "RAZZ", 7)), hands_per_game=1)
    setup = TableSetup("horse-1", 8, DECK, players=(1, 2, 3), rotation=games)
    t = TableDriver(GameController(setup), stud_zones(), deck=DECK, debounce=READ, move_s=0.3)
    for card, seat in zip("2s 3s 4s 5s 6s 7s".split(), (1, 2, 3, 1, 2, 3)):  # hold'em, the button on seat 8
        t.put(card, f"seat{seat}.cards")
    t.put("8s", "burn")
    t.clear()
    t.run(3.0)  # the hand is over: the button moves on to seat 1
    third_street(t, {1: "Ah Kh 5d", 2: "2h 3h Qc", 3: "4h 6h 7c"})
    assert [e.public["game"] for e in of(t.events, "hand_started")] == ["flhe", "razz"]
    assert codes(t) == []
    assert [e.public["seat"] for e in of(t.events, "bring_in")] == [2]  # the queen, the highest door card


def every_stud_event() -> list:
    """The events of every situation of this file, table after table (tests/test_schemas.py publishes them too)."""
    tables: list[TableDriver] = []

    def recorded(*args, **kwargs) -> TableDriver:
        tables.append(_table(*args, **kwargs))
        return tables[-1]

    for name, test in sorted(globals().items()):
        if name.startswith("test_") and name != "test_every_stud_event_matches_the_event_schemas":
            globals()["table"] = recorded
            try:
                test("tda") if "face_up_is_a_misdeal" in name else test()
            finally:
                globals()["table"] = _table
    return [event for t in tables for event in t.events]


def test_every_stud_event_matches_the_event_schemas():
    """The tour of this file's situations, published on both feeds: each message valid against its schema (the
    public one refuses a down card, tests/test_schemas.py shows the schemas refuse what the contract forbids)."""
    from test_schemas import problems  # noqa: PLC0415 (the contract's validators)

    seen = set()
    for event in every_stud_event():
        for secure, schema in ((False, "event.public.schema.json"), (True, "event.secure.schema.json")):
            body = {**event.payload(secure), "epoch": "stud-tour"}
            assert not problems(schema, body), (schema, body, problems(schema, body))
        seen.add(event.public.get("code", event.type))
    assert seen >= {"bring_in", "first_to_act", "card_dealt", "board_card", "stud_first_cards_up", "stud_up_card_down",
                    "stud_down_card_up", "stud_card_wrong_seat", "stud_up_cards_mixed", "deck_short",
                    "board_card_in_stud"}


_table = table
