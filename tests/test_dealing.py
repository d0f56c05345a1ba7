"""Dealing, misdeals and irregular cards (docs/rules.md section 1), played with physical cards.

Every scenario places tagged cards on the simulated table (``sim.table_driver``), reads them with the HAL's zone
tracker and feeds the zone events to the controller, as the daemon does. One test per row of docs/rules.md section 1,
one per house profile where the houses differ; then the commands of the floor and the dealer console, a journal
replay that restores what waits for the floor, and the simulated dealer erring for 1,000 hands.
"""

from collections import defaultdict
from typing import Callable

import pytest

from controller import TableController, TableSetup
from controller.cards import FULL_DECK
from controller.floor import CARDS
from controller.dealing import READ_ORDER_S
from controller.rules import EXPOSED_BURN_AFTER_DEAL, EXPOSED_REPLACE_NOW, PROFILES
from controller.table import NoBetting
from hal.zones import DebounceSettings
from sim.dealer import DealerSettings, SimDealer
from sim.field import TableField
from sim.table_driver import TableDriver, types

DECK_A = {f"E0040150A1{i:06X}": card for i, card in enumerate(FULL_DECK)}
DECK_B = {f"E0040150B2{i:06X}": card for i, card in enumerate(FULL_DECK)}  # another registered deck
UID = {"A": {card: uid for uid, card in DECK_A.items()}, "B": {card: uid for uid, card in DECK_B.items()}}
ZONES = {f"seat{n}.cards": ("main", n) for n in range(1, 11)} | {
    "board": ("main", 11), "burn": ("main", 12), "muck": ("main", 13), "exposed": ("main", 14)}
PLAYERS = (1, 2, 3, 5)  # a 6-seat table: seats 4 and 6 are empty
BUTTON = 5  # the first card goes to seat 1
ORDER = [1, 2, 3, 5]
FACE_UP_CODES = {"card_outside_hand", "extra_board_card", "burn_card_on_board", "board_card_burned"}
READ_AT_ONCE = DebounceSettings(present_after_cycles=1, absent_after_s=0.0)  # one pass of the readers per move


class BettingSays(NoBetting):
    """What a betting layer tells the dealing rules, as a test sets it; a table without chips otherwise (the folds
    the cards show still count as actions)."""

    def __init__(self) -> None:
        self.substantial = False  # players acted: a misdeal can no longer be called
        self.open: Callable[[], bool] = lambda: False  # players still to act on a bet in this betting round

    def substantial_action(self) -> bool:
        return self.substantial

    def round_open(self) -> bool:
        return self.open()


class Table(TableDriver):
    """A physical table: each card placed on a zone is read in one pass of the readers, 0.1 s after the last."""

    def __init__(self, rules: str = "tda", exposed_by: str = "console", players=PLAYERS, button=BUTTON,
                 seats: int = 6, hole_cards: int = 2, zones=ZONES, on_input=None):
        self.betting = betting = BettingSays()
        controller = TableController(TableSetup(
            "t", seats, DECK_A, hole_cards, clear_after_s=1.0, decks={"A": DECK_A, "B": DECK_B}, deck_id="A",
            button=button, players=players, rules=rules, exposed_by=exposed_by), betting)
        super().__init__(controller, zones, debounce=READ_AT_ONCE, cycle_s=0.1, start_t=1000.0, deck=DECK_A,
                         check=assert_public_part_names_no_hidden_card, on_input=on_input)
        self.stub = list(FULL_DECK)  # the next card to deal is the first one not dealt yet

    # ---- physical moves ------------------------------------------------------------------------------------

    def card(self) -> str:
        return self.stub.pop(0)

    def put(self, card: str, zone: str, deck: str = "A") -> list:
        if card in self.stub:
            self.stub.remove(card)
        return super().put(UID[deck][card], zone)

    def seat(self, seat: int, card: str | None = None) -> list:
        return self.put(card or self.card(), f"seat{seat}.cards")

    def take(self, card: str, deck: str = "A") -> list:
        return super().take(UID[deck][card])

    def deal(self, seats=ORDER, rounds: int = 2) -> list:
        out = []
        for _ in range(rounds):
            for seat in seats:
                out += self.seat(seat)
        return out

    def burn(self, card: str | None = None) -> list:
        return self.put(card or self.card(), "burn")

    def board(self, count: int = 1) -> list:
        out = []
        for _ in range(count):
            out += self.put(self.card(), "board")
        return out

    def gather(self) -> list:
        self.clear()
        return self.cycle() + self.skip(1.1)

    def wait(self, seconds: float) -> list:
        return self.skip(seconds)

    def settle(self) -> list:
        """Let the time pass in which a card read late could still come (what depends on it is decided then)."""
        return self.skip(READ_ORDER_S + 0.1)

    def try_command(self, name: str, role: str = "floor", **fields) -> tuple[list, str | None]:
        self.t += 0.1  # a moment after the last read
        return super().try_command(name, role=role, **fields)

    # ---- what happened ---------------------------------------------------------------------------------------

    def hole(self, seat: int) -> list[str]:
        return self.controller.snapshot(secure=True)["seats"][seat - 1]["hole_cards"]


def assert_public_part_names_no_hidden_card(event) -> None:
    """Hole cards, burn cards and misplaced cards travel in the secret part only."""
    public = event.public
    assert "cards" not in public and "hole_cards" not in public, event
    if "card" in public:
        assert event.type == "board_card" or (event.type == "irregular_card" and public["code"] in FACE_UP_CODES), event


def irregular(events) -> list:
    return [e for e in events if e.type == "irregular_card"]


def only(events, code: str):
    """The single irregularity among ``events``, which must have ``code``."""
    found = irregular(events)
    assert [e.public["code"] for e in found] == [code], [(e.public["code"], e.public["ruling"]) for e in found]
    return found[0]


def misdeal_of(events):
    found = [e for e in events if e.type == "misdeal"]
    assert len(found) == 1, types(events)
    return found[0]


def dealt(events) -> list[tuple[int, int]]:
    return [(e.public["seat"], e.public["count"]) for e in events if e.type == "card_dealt"]


# ---- a clean deal ----------------------------------------------------------------------------------------------

def test_a_clean_deal_raises_nothing_and_the_button_moves_to_the_next_player():
    table = Table()
    table.deal()
    assert dealt(table.events) == [(1, 1), (2, 1), (3, 1), (5, 1), (1, 2), (2, 2), (3, 2), (5, 2)]
    table.burn()
    table.board(3)
    table.burn()
    table.board()
    table.burn()
    table.board()
    table.gather()
    assert irregular(table.events) == [] and "misdeal" not in types(table.events)
    assert table.controller.snapshot(secure=False)["button"] == 1
    table.deal([2, 3, 5, 1])  # the next hand starts left of the new button
    assert irregular(table.events) == []
    snapshot = table.controller.snapshot(secure=False)
    assert snapshot["hand"] == 2 and snapshot["players"] == [1, 2, 3, 5] and snapshot["irregularities"] == []


def test_without_known_players_the_first_deal_is_learned_and_then_checked():
    table = Table(players=None, button=None)
    table.deal([2, 5, 6])  # who plays is known from the first round
    assert irregular(table.events) == []
    table.gather()
    assert table.controller.snapshot(secure=False)["players"] == [2, 5, 6]
    assert table.controller.button == 2  # the first deal showed the button at 6; it moved to 2
    table.seat(5)
    out = table.seat(1)  # seat 1 was not dealt in last hand
    assert only(out, "card_to_ineligible_seat").public["seats"] == [1]


# ---- docs/rules.md section 1, row by row ----------------------------------------------------------------------------

def test_the_first_card_exposed_on_its_way_is_a_misdeal_and_the_same_button_deals_again():
    table = Table(exposed_by="zone")
    out = table.put(table.card(), "exposed")  # the dealer puts the exposed card on the exposed zone
    assert types(out)[0] == "hand_started"
    event = only(out, "first_cards_exposed")
    assert event.public["ruling"] == "misdeal" and event.public["severity"] == "stop"
    assert not event.public["needs_floor"] and event.public["seats"] == [1] and event.public["position"] == 1
    assert {"CA GR 9c", "PP Misdeals 1a", "AC 30a"} <= set(event.public["rules"])
    misdeal = misdeal_of(out)
    assert misdeal.public == {"reason": "first_cards_exposed", "rules": event.public["rules"],
                              "irregularity": event.seq, "button": BUTTON}
    assert table.controller.snapshot(secure=False)["misdeal"] is True
    table.gather()
    assert table.controller.button == BUTTON  # a misdeal does not move the button
    table.deal()
    assert table.controller.hand == 2 and irregular(table.events[-10:]) == []


def test_the_second_card_exposed_reported_by_the_console_is_a_misdeal():
    table = Table()
    table.seat(1)
    second = table.card()
    table.seat(2, second)
    out, refusal = table.try_command("exposed_card", role="dealer", seat=2)
    assert refusal is None
    event = only(out, "first_cards_exposed")
    assert event.public["position"] == 2 and event.secret == {"cards": [second]}
    assert misdeal_of(out).public["reason"] == "first_cards_exposed"
    assert table.seat(3) == [] and table.burn() == []  # nothing counts in a void hand
    table.gather()
    out = table.deal()  # dealt again: a new hand, from the same button
    assert types(out)[:2] == ["hand_started", "card_dealt"] and irregular(out) == []


def test_two_cards_exposed_by_the_dealer_are_a_misdeal():
    table = Table(exposed_by="zone")
    table.deal([1, 2, 3], rounds=1)
    first = only(table.put(table.card(), "exposed"), "hole_card_exposed")  # the 4th card, due to seat 5
    assert first.public["seats"] == [5] and first.public["ruling"] == "burn_card"
    table.deal([1, 2, 3], rounds=1)  # round two goes on; seat 5 gets its cards at the end
    out = table.put(table.card(), "exposed")
    event = only(out, "cards_exposed")
    assert event.public["ruling"] == "misdeal" and {"PP Misdeals 1b", "AC 30b"} <= set(event.public["rules"])
    assert misdeal_of(out).public["irregularity"] == event.seq


def test_two_extra_cards_are_a_misdeal():
    table = Table()
    table.deal()
    first = only(table.seat(1), "extra_hole_card")
    assert first.public["ruling"] == "burn_card"
    out = table.seat(2)
    event = only(out, "extra_hole_card")
    assert event.public["ruling"] == "misdeal" and {"CA GR 9a", "PP Misdeals 1d"} <= set(event.public["rules"])
    assert misdeal_of(out).public["reason"] == "extra_hole_card"


def test_one_extra_card_before_the_betting_becomes_the_burn_card():
    table = Table()
    table.deal()
    extra = table.card()
    out = table.seat(1, extra)
    event = only(out, "extra_hole_card")
    assert event.public == {**event.public, "code": "extra_hole_card", "zone": "seat1.cards", "seat": 1, "seats": [1],
                            "ruling": "burn_card", "severity": "warning", "needs_floor": False, "profile": "tda"}
    assert "PP Irregularities 11" in event.public["rules"] and event.secret == {"card": extra}
    assert len(table.hole(1)) == 2 and extra not in table.hole(1)
    assert [e.public for e in table.put(extra, "burn") if e.type == "burn"] == [{"count": 1}]
    assert irregular(table.board(3)) == []  # the extra card was the flop's burn


def test_an_extra_card_found_after_substantial_action_makes_the_hand_dead():
    table = Table()
    table.deal()
    table.betting.substantial = True  # the betting layer: two players acted
    event = only(table.seat(3), "extra_hole_card")
    assert event.public["ruling"] == "dead_hand" and "TDA example 1-B" in event.public["rules"]
    table.gather()
    assert table.events[-1].type == "hand_ended" and 3 in table.events[-1].public["folded_seats"]


def test_an_eligible_player_dealt_out_waits_for_the_floor_and_the_confirmation_is_a_misdeal():
    table = Table()
    table.seat(1)
    table.seat(2)
    table.seat(5)  # seat 3 is passed over...
    table.seat(1)  # ...and the second round begins
    out = table.settle()  # seat 3's card was not merely read late
    event = only(out, "player_dealt_out")
    assert event.public["seats"] == [3] and event.public["needs_floor"] and event.public["ruling"] == "misdeal"
    assert {"CA GR 9b", "PP Misdeals 1j", "AC 30e"} <= set(event.public["rules"])
    pending = table.controller.snapshot(secure=False)["irregularities"]
    assert [(p["irregularity"], p["code"]) for p in pending] == [(event.seq, "player_dealt_out")]
    out, refusal = table.try_command("confirm", irregularity=event.seq, note="seat 3 was present")
    assert refusal is None
    assert [e.public for e in out if e.type == "floor_ruling"] == [{
        "irregularity": event.seq, "code": "player_dealt_out", "decision": "confirmed", "result": "misdeal",
        "note": "seat 3 was present", "by": "floor/ann"}]
    assert misdeal_of(out).public["irregularity"] == event.seq
    assert table.controller.snapshot(secure=False)["irregularities"] == []


def test_a_player_dealt_out_who_was_not_in_the_hand_is_overridden_and_play_goes_on():
    table = Table()
    for seat in (1, 2, 5, 1, 2, 5):
        table.seat(seat)
    table.settle()
    event = only(table.events, "player_dealt_out")
    out, refusal = table.try_command("override", irregularity=event.seq)
    assert refusal is None and [e.public["decision"] for e in out] == ["overridden"] and "misdeal" not in types(out)
    assert irregular(table.burn() + table.board(3)) == []
    table.gather()
    assert table.controller.snapshot(secure=False)["players"] == [1, 2, 5]


def test_a_seat_left_short_is_fixed_by_the_next_card_while_it_is_next_in_the_dealing_order():
    table = Table()
    for seat in ORDER + [1, 2, 3]:  # the button's second card is missing
        table.seat(seat)
    assert irregular(table.burn()) == []  # it may only have been read late...
    event = only(table.settle(), "wrong_card_count")  # ...but it did not come
    assert event.public["seats"] == [5] and event.public["ruling"] == "misdeal_unless_fixed"
    assert "PP Misdeals 1e" in event.public["rules"]
    out = table.seat(5)
    assert dealt(out) == [(5, 2)]
    assert [e.public for e in out if e.type == "irregularity_resolved"] == [
        {"irregularity": event.seq, "code": "wrong_card_count", "resolution": "fixed"}]
    table.board(3)
    assert "misdeal" not in types(table.events)


def test_a_seat_left_short_and_not_fixed_is_a_misdeal():
    table = Table()
    for seat in ORDER + [1, 2, 3]:
        table.seat(seat)
    table.burn()
    event = only(table.settle(), "wrong_card_count")
    out = table.board()
    misdeal = misdeal_of(out)
    assert misdeal.public["irregularity"] == event.seq and misdeal.public["reason"] == "wrong_card_count"


def test_after_substantial_action_a_short_hand_is_dead_and_play_goes_on():
    table = Table()
    for seat in ORDER + [1, 2, 3]:
        table.seat(seat)
    table.betting.substantial = True
    table.burn()
    event = only(table.settle(), "wrong_card_count")
    assert event.public["ruling"] == "dead_hand" and "TDA example 1-A" in event.public["rules"]
    assert irregular(table.board(3)) == []
    assert table.controller.snapshot(secure=False)["seats"][4]["folded"] is True


def test_a_card_to_the_wrong_seat_moved_on_before_the_next_card_is_fixed():
    table = Table()
    table.seat(1)
    card = table.card()
    assert table.seat(1, card) == []  # seat 1 again: the table waits for what the dealer does next
    out = table.seat(2, card)  # the dealer slides it on to seat 2
    event = only(out, "card_out_of_sequence")
    assert event.public["ruling"] == "fixed" and event.public["severity"] == "info" and event.public["seats"] == [1, 2]
    assert dealt(out) == [(2, 1)]
    table.deal([3, 5, 1, 2, 3, 5], rounds=1)
    assert len(irregular(table.events)) == 1 and table.hole(1) != [] and len(table.hole(1)) == 2


def test_a_card_out_of_sequence_dealt_over_is_a_misdeal():
    table = Table()
    table.seat(1)
    table.seat(3)  # seat 2's card went to seat 3
    out = table.seat(3)  # and the dealer went on: seat 3's own card
    event = only(out, "card_out_of_sequence")
    assert event.public["ruling"] == "misdeal" and "PP Misdeals 1f" in event.public["rules"]
    assert event.public["needs_floor"] and "misdeal" not in types(out)  # the table's idea of the order may be wrong
    out, _ = table.try_command("confirm", irregularity=event.seq)
    assert misdeal_of(out).public["reason"] == "card_out_of_sequence"


def test_a_card_out_of_sequence_confirmed_after_substantial_action_makes_the_hands_dead():
    table = Table()
    table.seat(1)
    table.seat(3)
    event = only(table.seat(3), "card_out_of_sequence")
    table.betting.substantial = True
    out, _ = table.try_command("confirm", irregularity=event.seq)
    assert [e.public["result"] for e in out] == ["dead_hand"] and "misdeal" not in types(out)
    snapshot = table.controller.snapshot(secure=False)
    assert [s["seat"] for s in snapshot["seats"] if s["folded"]] == [2, 3]


def test_the_first_card_to_the_wrong_seat_is_a_misdeal_once_the_floor_confirms():
    table = Table()
    table.seat(2)  # the first card belongs to seat 1
    table.seat(5)
    out = table.settle()  # seat 1's card was not merely read late
    event = only(out, "first_card_wrong_seat")
    assert event.public["seats"] == [2, 1] and event.public["needs_floor"] and event.public["button"] == BUTTON
    assert {"PP Misdeals 1h", "AC 30c"} <= set(event.public["rules"])
    out, _ = table.try_command("confirm", irregularity=event.seq)
    assert misdeal_of(out).public["reason"] == "first_card_wrong_seat"


def test_a_deal_from_the_wrong_button_is_a_misdeal_and_the_button_stays_where_it_belongs():
    table = Table()
    table.deal([2, 3, 5, 1], rounds=1)  # as if the button were at seat 1 — or seat 1's card was read late
    assert irregular(table.events) == []
    table.seat(2)  # the second round starts at seat 2 too: the deal followed another button
    event = only(table.events, "button_misplaced")
    assert event.public["button"] == BUTTON and event.public["dealt_from_button"] == 1
    assert {"PP Misdeals 1g", "PP Irregularities 1"} <= set(event.public["rules"])
    table.try_command("confirm", irregularity=event.seq)
    table.gather()
    assert table.controller.button == BUTTON
    table.deal()
    assert len(irregular(table.events)) == 1


def test_a_deal_from_the_wrong_button_round_a_full_table_is_seen_at_once():
    table = Table(players=tuple(range(1, 11)), button=10, seats=10)
    table.deal([3, 4, 5, 6, 7, 8], rounds=1)  # from seat 3...
    event = only(table.settle(), "button_misplaced")  # ...and seats 1 and 2 were not merely read late
    assert event.public["dealt_from_button"] == 2 and event.public["button"] == 10


def test_a_button_the_table_had_wrong_is_overridden_and_the_deal_moves_it_on():
    table = Table()
    table.deal([2, 3, 5, 1])
    event = only(table.events, "button_misplaced")
    table.try_command("override", irregularity=event.seq, note="the button was at seat 1")
    table.gather()
    assert table.controller.button == 2  # the deal's button (1) moved on
    table.deal([3, 5, 1, 2])
    assert len(irregular(table.events)) == 1


def test_a_card_to_an_empty_seat_waits_for_the_floor():
    table = Table()
    table.seat(1)
    table.seat(2)
    out = table.seat(4)  # seat 4 is empty
    event = only(out, "card_to_ineligible_seat")
    assert event.public["seats"] == [4] and event.public["needs_floor"] and event.public["ruling"] == "misdeal"
    assert {"PP Misdeals 1i", "AC 30d"} <= set(event.public["rules"])
    out, _ = table.try_command("confirm", irregularity=event.seq)
    assert misdeal_of(out).public["reason"] == "card_to_ineligible_seat"


def test_a_face_up_card_in_the_deck_is_replaced_and_a_second_one_is_a_misdeal():
    table = Table()
    table.deal([1, 2], rounds=1)
    out, _ = table.try_command("exposed_card", role="dealer")  # no seat: found face up in the deck
    event = only(out, "boxed_card")
    assert event.public["ruling"] == "replace_card" and "PP Irregularities 7" in event.public["rules"]
    table.deal([3, 5, 1, 2, 3, 5], rounds=1)  # the next card replaces it
    assert len(irregular(table.events)) == 1
    out, _ = table.try_command("exposed_card", role="dealer")
    event = only(out, "boxed_card")
    assert event.public["ruling"] == "misdeal" and "PP Misdeals 1c" in event.public["rules"]
    assert misdeal_of(out).public["reason"] == "boxed_card"


def test_a_face_up_card_on_the_exposed_zone_after_the_deal_is_a_boxed_card():
    table = Table(exposed_by="zone")
    table.deal()
    event = only(table.put(table.card(), "exposed"), "boxed_card")
    assert event.public["ruling"] == "replace_card" and event.public["zone"] == "exposed"


@pytest.mark.parametrize("rules, after_flop, after_action", [
    ("tda", True, False), ("casinos_austria", False, False), ("poker_play", True, False), ("allin_club", True, False),
    ("club_tournament_de", True, False)])
def test_when_a_misdeal_can_still_be_called_depends_on_the_house(rules, after_flop, after_action):
    # Before any action: every house accepts a misdeal.
    table = Table(rules=rules)
    table.deal()
    out, refusal = table.try_command("misdeal", role="dealer", note="cards stuck together")
    assert refusal is None and misdeal_of(out).public["reason"] == "called"
    assert misdeal_of(out).public["rules"] == [PROFILES[rules].cite("substantial_action")]
    # After the flop without a betting layer: only CA GR 9 says never after the flop.
    table = Table(rules=rules)
    table.deal()
    table.burn()
    table.board(3)
    _, refusal = table.try_command("misdeal")
    assert (refusal is None) is after_flop
    if refusal:
        assert "CA GR 9" in refusal
    # After substantial action as the house defines it (the betting layer says so): no house accepts it.
    table = Table(rules=rules)
    table.deal()
    table.betting.substantial = True
    _, refusal = table.try_command("misdeal")
    assert (refusal is None) is after_action and PROFILES[rules].cite("substantial_action") in refusal


@pytest.mark.parametrize("rules, ruling", [
    ("tda", "burn_card"), ("casinos_austria", "burn_card"), ("poker_play", "replace_card"),
    ("allin_club", "burn_card"), ("club_tournament_de", "burn_card")])
def test_a_later_hole_card_exposed_in_the_deal_follows_the_house(rules, ruling):
    table = Table(rules=rules)
    table.deal([1, 2, 3, 5], rounds=1)
    exposed = table.hole(5)[0]
    out, _ = table.try_command("exposed_card", role="dealer", seat=5)
    event = only(out, "hole_card_exposed")
    assert event.public["ruling"] == ruling and event.public["position"] == 4 and event.public["during_deal"]
    assert PROFILES[rules].cite("exposed_hole_card") in event.public["rules"] and event.secret == {"cards": [exposed]}
    assert table.hole(5) == []
    table.take(exposed)  # the dealer takes it off the seat
    if ruling == "replace_card":  # PP Irregularities 12-13: the player gets the next card
        table.deal([5, 1, 2, 3, 5], rounds=1)
        table.burn()
    else:  # DE 3: the burn card for the flop; the replacement after the deal
        table.deal([1, 2, 3, 5, 5], rounds=1)
        table.burn(exposed)
    assert len(irregular(table.events)) == 1 and len(table.hole(5)) == 2
    assert irregular(table.board(3)) == []  # one burn before the flop either way


def test_a_hole_card_a_player_flashes_after_the_deal_still_plays():
    table = Table()
    table.deal()
    table.burn()
    table.board(3)
    out, _ = table.try_command("exposed_card", role="dealer", seat=2)
    event = only(out, "hole_card_exposed")
    assert event.public["ruling"] == "play_on" and not event.public["during_deal"]
    assert "PP Irregularities 14" in event.public["rules"] and "misdeal" not in types(table.events)


def test_a_card_dealt_off_the_table_is_treated_as_exposed():
    table = Table(rules="poker_play")
    table.deal([1, 2, 3], rounds=1)
    out, refusal = table.try_command("exposed_card", role="dealer", seat=5)  # seat 5's card fell to the floor
    assert refusal is None
    event = only(out, "hole_card_exposed")
    assert event.public["seats"] == [5] and event.public["ruling"] == "replace_card" and event.secret == {}
    table.deal([5, 1, 2, 3, 5], rounds=1)
    assert len(irregular(table.events)) == 1


@pytest.mark.parametrize("rules", ["tda", "club_tournament_de"])
def test_a_forgotten_burn_before_the_turn_lets_play_go_on(rules):
    table = Table(rules=rules)
    table.deal()
    table.burn()
    table.board(3)
    for card in table.hole(5):  # an action on the flop: the next card is the turn (before it: TDA 39-1)
        table.put(card, "muck")
    table.board()
    event = only(table.settle(), "missing_burn")
    assert event.public["ruling"] == "play_on" and event.public["severity"] == "info"
    assert event.public["street"] == "turn" and event.public["rules"] == ["DE 3"]
    assert len(table.controller.snapshot(secure=False)["board"]) == 4


def test_premature_board_cards_are_returned_and_dealt_again():
    table = Table()
    table.deal()
    betting = {"open": True}
    table.betting.open = lambda: betting["open"]  # the betting layer: players still to act
    table.burn()
    flop = [table.card() for _ in range(3)]
    out = []
    for card in flop:
        out += table.put(card, "board")
    event = only(out, "premature_board_card")
    assert "board_card" not in types(out) and event.public["street"] == "flop" and event.public["needs_floor"]
    assert {"DE 3", "PP Irregularities 15", "TDA 39-3"} <= set(event.public["rules"])
    assert table.controller.snapshot(secure=False)["board"] == []
    for card in flop:
        table.take(card)  # returned, reshuffled into the stub
    betting["open"] = False
    table.try_command("confirm", irregularity=event.seq)
    out = table.put(flop[1], "board") + table.board(2)  # redealt: the same cards may come again
    assert [e.public["position"] for e in out if e.type == "board_card"] == [1, 2, 3] and irregular(out) == []


def test_a_board_card_before_the_deal_is_over_is_premature_by_the_cards_alone():
    table = Table()
    table.deal(ORDER + [1, 2], rounds=1)
    assert table.board() == []  # the last cards may only have been read late...
    event = only(table.settle(), "premature_board_card")  # ...but they did not come
    assert event.public["ruling"] == "return_and_redeal"
    assert irregular(table.deal([3, 5], rounds=1)) == []


def test_a_board_card_turned_while_the_last_hole_cards_were_only_read_late_is_dealt_once_they_come():
    table = Table()
    table.deal(ORDER + [1, 2], rounds=1)
    flop = table.card()
    assert table.put(flop, "board") == []  # seats 3 and 5 are still due a card: it waits for them
    out = table.deal([3, 5], rounds=1)  # read a moment late: the deal was over before the board card
    assert types(out) == ["card_dealt", "card_dealt", "board_card"] and out[-1].public["card"] == flop
    assert irregular(out + table.settle()) == []


def test_a_board_card_turned_before_the_deal_is_over_and_taken_back_is_returned_to_the_stub():
    table = Table()
    table.deal(ORDER + [1, 2], rounds=1)
    early = table.card()
    table.put(early, "board")
    table.take(early)  # the dealer takes it back before the last hole cards
    assert irregular(table.settle()) == []  # no premature card: it is not on the board
    assert "board_card" not in types(table.deal([3, 5], rounds=1))
    assert irregular(table.put(early, "muck")) == []  # a card returned to the stub, not an unseen card


def test_a_four_card_flop_is_mixed_and_the_floor_picks_the_burn():
    table = Table()
    table.deal()
    table.burn()
    flop = [table.card() for _ in range(4)]
    for card in flop[:3]:
        table.put(card, "board")
    table.betting.open = lambda: True  # the flop's betting round has not begun
    event = only(table.put(flop[3], "board"), "four_card_flop")
    assert event.public["ruling"] == "floor_picks_burn" and {"TDA 39-1", "AC 32"} <= set(event.public["rules"])
    _, refusal = table.try_command("confirm", irregularity=event.seq)
    assert "floor_pick" in refusal
    _, refusal = table.try_command("floor_pick", irregularity=event.seq, card=table.stub[0])
    assert "not one of the cards" in refusal
    out, refusal = table.try_command("floor_pick", irregularity=event.seq, card=flop[1])
    assert refusal is None
    corrected = [e for e in out if e.type == "board_corrected"][0]
    assert corrected.public == {"irregularity": event.seq, "code": "four_card_flop", "board": [flop[0], *flop[2:]],
                                "by": "floor/ann"}
    assert corrected.secret == {"card": flop[1]} and [e.public for e in out if e.type == "burn"] == [{"count": 2}]
    table.put(flop[1], "burn")  # the dealer puts the pick on the burn zone: nothing new
    assert irregular(table.events) == [event] and table.controller.board == [flop[0], *flop[2:]]


@pytest.mark.parametrize("rules", sorted(PROFILES))
def test_a_flop_without_a_burn_follows_the_house(rules):
    table = Table(rules=rules)
    table.deal()
    flop = [table.card() for _ in range(3)]
    out = []
    for card in flop:
        out += table.put(card, "board")
    out += table.settle()  # no burn card read late either
    event = only(out, "flop_without_burn")
    assert [e.public["position"] for e in out if e.type == "board_card"] == [1, 2, 3]
    assert PROFILES[rules].cite("missing_flop_burn") in event.public["rules"]
    if rules == "club_tournament_de":  # DE 3: the round is played on
        assert event.public["ruling"] == "play_on" and not event.public["needs_floor"]
        return
    assert event.public["ruling"] == "floor_picks_burn" and event.public["needs_floor"]  # TDA 39-2
    for card in flop:
        table.take(card)  # the three are mixed face down
    out = table.put(flop[2], "burn")  # the floor's pick goes to the burn zone
    assert [e.public for e in out if e.type == "board_corrected"] == [
        {"irregularity": event.seq, "code": "flop_without_burn", "board": flop[:2]}]
    table.put(flop[0], "board")
    table.put(flop[1], "board")
    out = table.board()  # the next card completes the flop
    assert [(e.public["position"], e.public["street"]) for e in out if e.type == "board_card"] == [(3, "flop")]
    assert irregular(table.events) == [event]


def test_a_flop_without_a_burn_after_action_is_overridden_and_played_as_dealt():
    table = Table()
    table.deal()
    table.board(3)
    event = only(table.settle(), "flop_without_burn")
    out, _ = table.try_command("override", irregularity=event.seq, note="seat 1 had checked")
    assert [e.public["result"] for e in out] == ["play_on"]
    table.burn()
    assert types(table.board()) == ["board_card"] and len(table.controller.board) == 4


def test_a_card_of_another_deck_in_play_voids_the_hand_even_after_substantial_action():
    table = Table()
    table.deal(ORDER + [1, 2], rounds=1)
    table.betting.substantial = True
    out = table.put("Kc", "seat3.cards", deck="B")
    event = only(out, "foreign_card")
    assert event.public["deck"] == "B" and event.public["ruling"] == "misdeal" and event.public["needs_floor"]
    assert event.public["rules"] == ["PP Irregularities 3"] and dealt(out) == []
    out, _ = table.try_command("confirm", irregularity=event.seq)
    assert [e.public["result"] for e in out if e.type == "floor_ruling"] == ["misdeal"]
    assert misdeal_of(out).public["reason"] == "foreign_card"


def test_a_card_of_another_deck_in_the_discards_lets_the_action_stand():
    table = Table()
    out = table.put("Kc", "muck", deck="B")  # between hands
    assert only(out, "foreign_card").public["ruling"] == "remove_card"
    table.take("Kc", deck="B")
    table.deal()
    event = only(table.put("Qd", "burn", deck="B"), "foreign_card")
    assert event.public["ruling"] == "action_stands" and not event.public["needs_floor"]


def test_two_cards_of_the_same_rank_and_suit_void_the_hand():
    table = Table()
    table.deal([1, 2, 3], rounds=1)
    twin = table.hole(2)[0]
    out = table.put(twin, "seat5.cards", deck="B")  # the same card, from deck B
    event = only(out, "duplicate_card")
    assert event.public["seats"] == [5, 2] and event.public["rules"] == ["PP Irregularities 4"]
    assert event.secret == {"cards": [twin]}
    out, _ = table.try_command("confirm", irregularity=event.seq)
    assert misdeal_of(out).public["reason"] == "duplicate_card"


# ---- the floor and the dealer console ------------------------------------------------------------------------

def test_the_floor_names_only_irregularities_that_wait_for_it():
    table = Table()
    table.deal()
    event = only(table.seat(1), "extra_hole_card")  # ruled at once: nothing to confirm
    _, refusal = table.try_command("confirm", irregularity=event.seq)
    assert refusal == f"no irregularity {event.seq} waits for the floor"
    _, refusal = table.try_command("floor_pick", irregularity=999, card="As")
    assert refusal == "no irregularity 999 waits for the floor"


def test_what_waits_for_the_floor_lapses_with_its_hand():
    table = Table()
    table.seat(2)
    table.seat(5)
    out = table.gather()
    event = only(out, "first_card_wrong_seat")
    assert [e.public for e in out if e.type == "irregularity_resolved"] == [
        {"irregularity": event.seq, "code": "first_card_wrong_seat", "resolution": "hand_ended"}]
    assert table.controller.floor.of(CARDS) == {}


def test_set_button_and_seats_apply_to_the_next_hand():
    table = Table()
    out, refusal = table.try_command("set_button", role="dealer", seat=2)
    assert refusal is None and out[0].public == {"seat": 2, "applies_to_hand": 1, "by": "dealer/ann"}
    out, _ = table.try_command("seats", seats=[1, 3, 5, 6])
    assert out[0].type == "seats_set" and out[0].public["seats"] == [1, 3, 5, 6]
    table.deal([3, 5, 6, 1])
    assert irregular(table.events) == []
    table.try_command("set_button", seat=6)  # during the hand: for the next one
    assert table.controller.snapshot(secure=False)["button"] == 2
    table.gather()
    assert table.controller.button == 6
    table.deal([1, 3, 5, 6])
    assert irregular(table.events) == []


def test_console_commands_that_the_table_does_not_implement_are_refused():
    table = Table()
    for name, fields in (("undo", {}), ("start_clock", {"seat": 2}), ("time_bank", {"seat": 2})):
        out, refusal = table.try_command(name, role="dealer", **fields)
        assert (out, refusal) == ([], f"{name} is not available on this table")
    out, refusal = table.try_command("new_hand", role="dealer")
    assert refusal is None and [(e.type, e.public) for e in out] == [("new_hand", {"by": "dealer/ann"})]
    out, refusal = table.try_command("floor_call", role="dealer", seat=3, note="dispute")
    assert [(e.type, e.public) for e in out] == [("floor_call", {"seat": 3, "note": "dispute", "by": "dealer/ann"})]


def test_commands_of_the_rest_of_the_table_are_refused_by_the_card_controller_alone():
    # the chip layer's, the clock's, the tournament's and the seats' commands: a bare card controller answered
    # them ok and did nothing
    table = Table()
    for command, fields in (("set_stacks", {"stacks": {"1": 100}}), ("stop_clock", {}), ("bomb_pot", {"amount": 100}),
                            ("set_level", {}), ("seat_player", {"seat": 1, "name": "Ann"}), ("clear_seat", {"seat": 1})):
        out, refusal = table.controller.handle_command({"role": "floor", "user": "ann", "command": command,
                                                        **fields}, table.t)
        assert (out, refusal) == ([], f"{command} is not available on this table"), command


def test_a_table_with_an_exposed_zone_refuses_the_console_report_of_a_seat():
    table = Table(exposed_by="zone")
    table.deal([1, 2], rounds=1)
    _, refusal = table.try_command("exposed_card", role="dealer", seat=2)
    assert refusal == "this table reports exposed cards on its exposed zone: place the card there"
    _, refusal = Table().try_command("exposed_card", role="dealer", seat=2)
    assert refusal == "no hand is running"


def test_a_journal_replay_restores_what_waits_for_the_floor(tmp_path):
    from rfid_table.service.journal import Journal
    from rfid_table.service.replay import replay

    inputs: list = []

    def journaled(step) -> None:  # as the daemon journals: accepted commands, ticks that changed something
        if step.kind == "zone":
            inputs.append(("zone", step.t, {"kind": step.body.kind, "zone": step.body.zone, "uid": step.body.uid}))
        elif step.kind == "command" and step.refusal is None:
            inputs.append(("command", step.t, step.body))
        elif step.kind == "tick" and step.produced:
            inputs.append(("tick", step.t, {}))

    table = Table(on_input=journaled)
    table.seat(1)
    table.seat(2)
    table.seat(5)
    table.seat(1)
    table.settle()  # seat 3 dealt out: waits for the floor
    table.try_command("set_button", seat=3)
    table.try_command("exposed_card", role="dealer", seat=1)  # the 4th card of the deal
    journal = Journal(tmp_path / "j.db")
    assert journal.open().ok
    journal.record(inputs, table.events)
    restored = TableController(table.controller.setup)
    result = replay(journal, restored)
    journal.close()
    assert result.mismatches == []
    assert restored.snapshot(secure=True) == table.controller.snapshot(secure=True)
    assert [p["code"] for p in restored.snapshot(secure=False)["irregularities"]] == ["player_dealt_out"]
    out, refusal = restored.handle_command({"id": "c", "role": "floor", "user": "ann", "command": "confirm",
                                            "irregularity": restored.snapshot(secure=False)["irregularities"][0][
                                                "irregularity"]}, table.t + 1)
    assert refusal is None and "misdeal" in types(out)


# ---- the simulated dealer, erring ------------------------------------------------------------------------------

EXPECTED = {  # what each injected error must be reported as
    "exposed_card": ("first_cards_exposed", "hole_card_exposed"),
    "extra_card": ("extra_hole_card",),
    # heads-up with 4+ hole cards, a card to the other seat dealt over is what dealing a player out looks like
    "wrong_seat": ("card_out_of_sequence", "player_dealt_out"),
    "premature_board": ("premature_board_card",),
    "foreign_card": ("foreign_card",),
    "duplicate_card": ("duplicate_card",),
}


def play_with_errors(hands: int, seed: int, rules: str, exposed_by: str, players: tuple[int, ...],
                     hole_cards: int = 2, **rates):
    """The simulated dealer's moves, read by the zone tracker, into the controller; the floor confirms every
    irregularity that waits for it at once (as the simulated dealer assumes)."""
    procedure = EXPOSED_REPLACE_NOW if PROFILES[rules].exposed_hole_card == EXPOSED_REPLACE_NOW \
        else EXPOSED_BURN_AFTER_DEAL
    controller = TableController(TableSetup("t", 10, DECK_A, hole_cards, decks={"A": DECK_A, "B": DECK_B}, deck_id="A",
                                            button=players[0], players=players, rules=rules, exposed_by=exposed_by),
                                 betting := BettingSays())
    table = TableDriver(controller, ZONES, debounce=READ_AT_ONCE, start_t=1000.0)
    dealer = SimDealer(table.field, DECK_A, DealerSettings(list(players), hole_cards, 0.5, 0.3, spare_deck=DECK_B,
                                                           exposed_by=exposed_by, exposed_procedure=procedure,
                                                           **rates), seed)
    betting.open = lambda: dealer.betting_open
    for move in dealer.hands(hands):
        move.apply()
        for event in table.cycle(after_s=move.delay_s, console=move.command):
            if event.type == "irregular_card" and event.seq in controller.floor.of(CARDS):
                _, refusal = table.try_command("confirm", irregularity=event.seq, user="sim")
                assert refusal is None, refusal
    table.skip(5)
    return dealer, controller, table.events


def check_reports(dealer, controller, events) -> dict:
    reported = defaultdict(list)
    for event in events:
        assert_public_part_names_no_hidden_card(event)
        if event.type == "irregular_card":
            reported[event.hand].append(event)
    injected = defaultdict(list)
    for error in dealer.errors:
        injected[error.hand].append(error)
    assert controller.hand == dealer.hands_dealt
    false_alarms = {hand: [e.public["code"] for e in found] for hand, found in reported.items() if hand not in injected}
    assert false_alarms == {}
    for hand, errors in injected.items():
        found = reported.get(hand, [])
        assert len(found) == len(errors), (hand, errors, [e.public for e in found])
        for error, event in zip(errors, found):
            assert event.public["code"] in EXPECTED[error.kind], (error, event.public)
            assert error.seat is None or error.seat in event.public["seats"], (error, event.public)
            voided = any(e.type == "misdeal" and e.hand == hand for e in events)
            assert voided is any(e.void for e in errors), (hand, errors)
    assert controller.floor.of(CARDS) == {}
    return {"hands": dealer.hands_dealt, "errors": len(dealer.errors),
            "misdeals": sum(e.type == "misdeal" for e in events),
            "clean_hands": dealer.hands_dealt - len(injected)}


@pytest.mark.slow
def test_a_thousand_hands_with_dealing_errors_each_reported_exactly_once_and_no_false_alarm():
    rates = dict(exposed_rate=0.03, extra_card_rate=0.03, wrong_seat_rate=0.03, premature_board_rate=0.03,
                 foreign_card_rate=0.02, duplicate_card_rate=0.02)
    dealer, controller, events = play_with_errors(1000, 7, "tda", "zone", (1, 2, 3, 4, 5, 6), **rates)
    figures = check_reports(dealer, controller, events)
    kinds = {e.kind for e in dealer.errors}
    assert kinds == set(EXPECTED) and figures["errors"] > 100 and figures["clean_hands"] > 800, figures
    # The wrong seats went both ways: moved on at once (fixed) and dealt over (a misdeal).
    outcomes = {e.public["ruling"] for e in events if e.type == "irregular_card" and e.public["code"] ==
                "card_out_of_sequence"}
    assert outcomes == {"fixed", "misdeal"}


@pytest.mark.parametrize("rules, exposed_by, players, hole_cards", [
    ("poker_play", "console", (2, 5, 7), 2), ("club_tournament_de", "console", (1, 2), 2),
    ("casinos_austria", "zone", tuple(range(1, 11)), 2), ("allin_club", "zone", (3, 4, 8, 9), 4),
    ("poker_play", "console", (1, 6), 5)])
def test_the_erring_dealer_in_other_houses_seatings_and_games(rules, exposed_by, players, hole_cards):
    rates = dict(exposed_rate=0.06, extra_card_rate=0.05, wrong_seat_rate=0.05, premature_board_rate=0.05,
                 foreign_card_rate=0.03, duplicate_card_rate=0.03)
    figures = check_reports(*play_with_errors(150, 3, rules, exposed_by, players, hole_cards, **rates))
    assert figures["errors"] > 20


def test_a_dealer_without_errors_deals_as_it_always_did():
    field = TableField(ZONES)
    settings = DealerSettings([1, 2, 3], 2, 0.5, 0.3)
    moves = [(m.delay_s, m.describe) for m in SimDealer(field, DECK_A, settings, 5).hands(3)]
    again = [(m.delay_s, m.describe) for m in SimDealer(TableField(ZONES), DECK_A, settings, 5).hands(3)]
    assert moves == again and not any("exposed" in d or "extra" in d for _, d in moves)
    dealer = SimDealer(TableField(ZONES), DECK_A, settings, 5)
    list(dealer.hands(3))
    assert dealer.errors == [] and dealer.hands_dealt == 3


# ---- the event and snapshot schemas -------------------------------------------------------------------------

def every_kind_of_event() -> list:
    """A table through every irregularity code, every new event type and every command event."""
    events: list = []

    def play(table: Table, *steps) -> Table:
        for step in steps:
            step(table)
        events.extend(table.events)
        return table

    def pending(table: Table) -> int:
        return next(iter(table.controller.floor.of(CARDS)))

    # The codes the controller always had.
    table = Table(players=(1, 2, 3), button=3)
    table.put("Ah", "board")
    table.take("Ah")
    table.put("Ac", "burn")
    table.take("Ac")
    table.deal([1, 2, 3])
    table.seat(1)  # extra_hole_card
    table.put(table.hole(1)[0], "seat3.cards")  # hole_card_moved
    table.put(table.hole(2)[0], "muck")
    table.put(table.hole(2)[0], "muck")  # seat 2 folds
    table.seat(2)  # card_to_folded_seat
    table.put("Jd", "muck")  # unseen_card_mucked
    table.burn()
    table.board(3)
    table.put(table.controller.burns[0], "board")  # burn_card_on_board
    table.seat(3)  # hole_card_after_board
    table.put(table.controller.board[0], "seat1.cards")  # played_card_to_seat
    table.put(table.hole(3)[0], "board")  # hole_card_on_board
    table.put(table.hole(3)[0], "burn")  # hole_card_burned
    table.put(table.controller.board[1], "burn")  # board_card_burned
    table.board(2)  # the river and a sixth card
    events.extend(table.events)
    table = Table(zones=ZONES | {"pot": ("main", 15)})
    table.deal()
    table.place("Kd", zone="pot")
    assert [e.public["code"] for e in irregular(table.cycle())] == ["card_in_chip_zone"]
    events.extend(table.events)
    # The deal, the board, the deck, the floor and the console.
    play(Table(exposed_by="zone"), lambda t: t.put(t.card(), "exposed"), lambda t: t.gather())
    play(Table(exposed_by="zone"), lambda t: t.deal([1, 2, 3], rounds=1), lambda t: t.put(t.card(), "exposed"),
         lambda t: t.deal([1, 2, 3], rounds=1), lambda t: t.put(t.card(), "exposed"))
    play(Table(), lambda t: t.deal(), lambda t: t.put(t.card(), "exposed"))
    play(Table(), lambda t: t.deal([1, 2, 3, 5], rounds=1), lambda t: t.try_command("exposed_card", seat=5))
    play(Table(), lambda t: t.deal(), lambda t: t.burn(), lambda t: t.try_command("exposed_card", seat=2))
    play(Table(), lambda t: [t.seat(s) for s in (1, 2, 5, 1)], lambda t: t.settle(),
         lambda t: t.try_command("confirm", irregularity=pending(t), note="seat 3 was present"))
    play(Table(), lambda t: [t.seat(s) for s in ORDER + [1, 2, 3]], lambda t: t.burn(), lambda t: t.settle(),
         lambda t: t.seat(5))
    play(Table(), lambda t: [t.seat(s) for s in ORDER + [1, 2, 3]], lambda t: t.burn(), lambda t: t.settle(),
         lambda t: t.board())
    play(Table(), lambda t: t.seat(1), lambda t: t.seat(3), lambda t: t.seat(3))
    play(Table(), lambda t: t.seat(2), lambda t: t.seat(5), lambda t: t.gather())
    play(Table(), lambda t: t.deal([2, 3, 5, 1]), lambda t: t.try_command("override", irregularity=pending(t)))
    play(Table(), lambda t: t.deal([1, 2, 4], rounds=1))
    play(Table(), lambda t: t.deal([1], rounds=1), lambda t: t.try_command("exposed_card"),
         lambda t: t.try_command("exposed_card"))
    play(Table(), lambda t: t.deal(), lambda t: t.burn(), lambda t: t.board(3),
         lambda t: t.put(t.hole(5)[0], "muck"), lambda t: t.board(), lambda t: t.settle())  # a fold, then the turn
    play(Table(), lambda t: t.deal(ORDER + [1], rounds=1), lambda t: t.board(), lambda t: t.settle())
    play(Table(), lambda t: t.deal(), lambda t: t.board(3), lambda t: t.settle(),
         lambda t: t.put(t.controller.board[0], "burn"), lambda t: t.board())
    table = play(Table(), lambda t: t.deal(), lambda t: t.burn(), lambda t: t.board(3))
    table.betting.open = lambda: True
    table.board()
    table.try_command("floor_pick", irregularity=pending(table), card=table.controller.board[0])
    events.extend(table.events[-3:])
    play(Table(), lambda t: t.put("Kc", "muck", deck="B"), lambda t: t.take("Kc", deck="B"), lambda t: t.deal(),
         lambda t: t.put("Qd", "burn", deck="B"), lambda t: t.put("Qc", "seat1.cards", deck="B"))
    play(Table(), lambda t: t.deal([1, 2], rounds=1), lambda t: t.put(t.hole(1)[0], "seat3.cards", deck="B"))
    play(Table(), lambda t: t.try_command("set_button", seat=2), lambda t: t.try_command("seats", seats=[1, 2, 3, 5]),
         lambda t: t.try_command("new_hand", role="dealer"),
         lambda t: t.try_command("floor_call", role="dealer", seat=3),
         lambda t: t.deal([3, 5, 1, 2]), lambda t: t.try_command("misdeal", note="cards stuck together"))

    def lose_two_cards(table: Table) -> None:  # card_missing twice, one returned, and the hand's audit
        lost, found = table.hole(1)[0], table.hole(2)[0]
        table.take(lost)
        table.take(found)
        table.wait(11.0)
        table.put(found, "seat2.cards")

    play(Table(), lambda t: t.deal(), lambda t: t.burn(), lambda t: t.board(3), lose_two_cards, lambda t: t.gather())
    return events


DEAL_EVENT_TYPES = ("misdeal", "floor_ruling", "irregularity_resolved", "board_corrected", "button_set", "seats_set",
                    "new_hand", "floor_call", "hand_audit")


def event_definitions(branch: str) -> dict:
    """The ``$defs`` of a branch's event schema."""
    import json

    from conftest import ROOT

    return json.loads((ROOT / "schemas" / f"event.{branch}.schema.json").read_text())["$defs"]


def test_every_event_of_the_deal_matches_the_event_schemas_and_every_branch_is_met():
    from jsonschema import Draft202012Validator

    from test_stud_table import every_stud_event  # the stud deal's codes

    events = every_kind_of_event() + every_stud_event()
    met: dict[str, set[str]] = {"public": set(), "secure": set()}
    for branch in ("public", "secure"):
        defs = event_definitions(branch)
        new_types = set(DEAL_EVENT_TYPES)
        leaves = [name for name, d in defs.items()
                  if name.startswith("irregular_card.") and "additionalProperties" in d] + sorted(new_types)
        validators = {leaf: Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{leaf}"}) for leaf in leaves}
        whole = {t: Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{t}"})
                 for t in ["irregular_card", *new_types]}
        for event in events:
            if event.type not in whole:
                continue
            body = {**event.payload(secure=branch == "secure"), "epoch": "e"}
            errors = [f"{e.json_path}: {e.message}" for e in whole[event.type].iter_errors(body)]
            assert not errors, (branch, body, errors)
            matched = [leaf for leaf in leaves if (leaf == event.type or leaf.startswith(f"{event.type}."))
                       and validators[leaf].is_valid(body)]
            assert len(matched) == 1, (branch, body, matched)
            met[branch].add(matched[0])
            if branch == "public":  # a public payload never passes for a secure one that has its secret
                secure_body = {**event.payload(secure=True), "epoch": "e"}
                if secure_body != body:
                    assert not whole[event.type].is_valid(secure_body), secure_body
        assert met[branch] == set(leaves), sorted(set(leaves) - met[branch])


def test_the_snapshots_of_the_deal_match_the_snapshot_schemas():
    import json

    from jsonschema import Draft202012Validator

    from conftest import ROOT

    schemas = {secure: Draft202012Validator(json.loads(
        (ROOT / "schemas" / f"snapshot.{'secure' if secure else 'public'}.schema.json").read_text()))
        for secure in (False, True)}
    table = Table()
    snaps = [table.controller.snapshot(secure=False)]
    table.seat(2)
    table.seat(5)
    table.settle()
    snaps += [table.controller.snapshot(secure=s) for s in (False, True)]
    table = Table(players=None, button=None)
    snaps.append(table.controller.snapshot(secure=False))
    for snap in snaps:
        secure = "burn_cards" in snap
        assert not list(schemas[secure].iter_errors({**snap, "epoch": "e"})), snap
    assert snaps[1]["irregularities"][0]["code"] == "first_card_wrong_seat" and snaps[-1]["players"] is None
