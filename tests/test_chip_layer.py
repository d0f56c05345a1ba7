"""The chip layer at a simulated table: chips placed on the betting zones, read through the zone tracker into the
controller — the situations the generated hands do not reach: a straddle read from the chips before the deal, a
declaration that turns a single overchip into a raise, a foreign chip in a bet, a late blind."""

from __future__ import annotations

import pytest

from controller.cards import FULL_DECK
from controller.chip_betting import BettingSetup
from controller.game import GameController
from controller.table import TableSetup
from sim.replay import card_uid, chip_uid, table_zones
from sim.table_driver import TableDriver, actions, debounce_by_pile

DENOMINATIONS = (5, 25, 100, 500, 1000)
ZONES = table_zones() | {f"seat{s}.stack": ("main", 24 + s) for s in range(1, 11)}  # stack zones too
DECK = {card_uid(i): card for i, card in enumerate(FULL_DECK)}


class Table(TableDriver):
    """Four players (seats 1 to 4, the button on 4) at blinds of 50/100; the dealer's console enters the commands."""

    def __init__(self, rules: str = "tda"):
        rack = {value: [chip_uid(d, n) for n in range(50)] for d, value in enumerate(DENOMINATIONS)}
        chips = {uid: value for value, uids in rack.items() for uid in uids}
        controller = GameController(
            TableSetup("chips", 10, DECK, decks={"A": DECK}, deck_id="A", players=(1, 2, 3, 4), button=4,
                       rules=rules),
            BettingSetup(small_blind=50, big_blind=100, chips=chips, chip_set="test", rules=rules,
                         other_chips={"E0040150EE000001": "old-series"}))
        super().__init__(controller, ZONES, debounce=debounce_by_pile(ZONES), deck=DECK, rack=rack)

    def deal(self, seats=(1, 2, 3, 4)) -> None:
        cards = iter(FULL_DECK[::-1])
        for _ in range(2):
            for seat in seats:
                self.put(next(cards), f"seat{seat}.cards", seconds=0.2)
        self.run(0.6)

    def command(self, name: str, **fields) -> list:
        return super().command(name, role="dealer", user="test", **fields)


def test_a_straddle_is_read_from_the_chips_before_the_deal_and_acts_last():
    table = Table()
    table.command("set_stacks", stacks={"1": 5000, "2": 5000, "3": 5000, "4": 5000})
    table.chips(1, 25, 25)  # small blind (button 4)
    table.chips(2, 100)  # big blind
    table.chips(3, 100, 100)  # a live straddle of 200 by the seat after the big blind
    table.deal()
    table.chips(4, 100, 100)  # the button calls the straddle: first to act pre-flop
    assert actions(table.events) == [(1, "post_sb", 50), (2, "post_bb", 100), (3, "straddle", 200),
                                     (4, "call", 200)]
    started = next(e for e in table.events if e.type == "betting_started")
    assert started.public["button"] == 4
    snapshot = table.controller.snapshot(secure=False)["betting"]
    assert snapshot["to_act"] == 1 and snapshot["current_bet"] == 200


@pytest.mark.parametrize("declared, expected", [(False, (3, "call", 100)), (True, (3, "raise", 500))])
def test_a_single_overchip_is_a_call_unless_raise_was_declared(declared, expected):
    table = Table()
    table.command("set_stacks", stacks={"1": 5000, "2": 5000, "3": 5000, "4": 5000})
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal()
    if declared:
        table.command("declare", seat=3, declaration="raise")  # entered at the console
    produced = table.chips(3, 500)  # one 500 chip facing the big blind of 100
    assert actions(produced)[-1] == expected
    ruled = [a for a in produced if a.type == "action"][-1]
    assert ruled.public["rules"], "the action names the rule that shaped it"


def test_a_foreign_chip_is_reported_and_never_counts_toward_a_bet():
    table = Table()
    table.command("set_stacks", stacks={"1": 5000, "2": 5000, "3": 5000, "4": 5000})
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal()
    table.place("E0040150EE000001", zone="seat3.bets")  # a chip of the old series, with a real 100
    produced = table.chips(3, 100)
    foreign = [e for e in table.events if e.type == "foreign_chip"]
    assert len(foreign) == 1 and foreign[0].public["chip_set"] == "old-series"
    assert actions(produced) == [(3, "call", 100)]
    assert table.controller.snapshot(secure=False)["betting"]["current_bet"] == 100


def checked_down(table: "Table") -> tuple[dict, list, int]:
    """Seats 3 and 4 fold, the blinds check it down to the showdown: (hole cards, board, winner)."""
    table.command("set_stacks", stacks={"1": 5000, "2": 5000, "3": 5000, "4": 5000})
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal()  # from the top of the reversed deck: seat 1 Ac Kc… (FULL_DECK reversed)
    hole = {s: [e.secret["card"] for e in table.events if e.type == "card_dealt" and e.public["seat"] == s]
            for s in (1, 2, 3, 4)}
    for seat in (3, 4):  # two players fold, the blinds check it down
        for card in hole[seat]:
            table.place(card, zone="muck")
        table.run(0.8)
    table.chips(1, 25, 25)  # the small blind completes
    used = {c for cards in hole.values() for c in cards}
    board = [c for c in ("2c", "7d", "9h", "Js", "4s", "3h", "8c", "Td") if c not in used][:5]  # a dry board
    burns = iter(c for c in ("2d", "2h", "2s", "3c", "3d") if c not in used and c not in board)
    for position, card in enumerate(board, start=1):
        if position in (1, 4, 5):  # a burn before each street (a fourth card without one is a four-card flop)
            table.place(next(burns), zone="burn")
            table.run(0.3)
        table.place(card, zone="board")
        table.run(0.3)
    from controller.betting import NLHE
    from controller.showdown import hand_rank
    ranks = {s: hand_rank(NLHE, hole[s], board) for s in (1, 2)}
    assert ranks[1] != ranks[2], "the board must not split the pot"
    return hole, board, min(ranks, key=ranks.get)


def test_a_winning_hand_pushed_into_the_muck_at_the_showdown_goes_to_the_floor():
    table = Table()
    hole, _board, winner = checked_down(table)
    for card in hole[winner]:  # the dealer mucks the winner's cards
        table.place(card, zone="muck")
    produced = table.run(0.8)
    ruling = [e for e in produced if e.type == "bet_ruling"]
    assert [r.public["code"] for r in ruling] == ["winning_hand_mucked"] and ruling[0].public["seat"] == winner
    assert ruling[0].public["needs_floor"] and "AC 14" in ruling[0].public["rules"]


@pytest.mark.parametrize("to_the_winner", [True, False])
def test_a_pot_pushed_to_the_wrong_player_is_reported_where_stack_zones_see_it(to_the_winner):
    table = Table()
    hole, _board, winner = checked_down(table)
    loser = 3 - winner
    # the dealer collects the river (nothing was bet: the pot as it is)
    table.place(*table.tags_in("seat1.bets"), *table.tags_in("seat2.bets"), zone="pot")
    table.run(1.0)
    table.place(*table.tags_in("pot"), zone=f"seat{winner if to_the_winner else loser}.stack")  # pushes the 200
    table.run(1.0)
    table.clear()
    produced = table.run(3.0)
    assert "showdown" in [e.type for e in produced]
    award = [(e.public["seat"], e.public["expected"], e.public["seen"]) for e in produced
             if e.type == "chip_count" and e.public["code"] == "award"]
    assert award == ([] if to_the_winner else sorted([(winner, 200, 0), (loser, 0, 200)]))


def test_a_dead_button_set_by_the_floor_places_the_blinds_after_the_empty_seat():
    table = Table()
    table.command("seats", seats=[1, 2, 3, 6, 7])
    table.command("set_button", seat=5)  # the button's player busted: the button stays on seat 5
    table.command("set_stacks", stacks={s: 5000 for s in ("1", "2", "3", "6", "7")})
    table.chips(6, 25, 25)  # small blind: the first seat after the dead button
    table.chips(7, 100)  # big blind
    table.deal(seats=(6, 7, 1, 2, 3))
    table.chips(1, 100)  # first to act after the big blind
    started = next(e for e in table.events if e.type == "betting_started")
    assert started.public["button"] == 5 and started.public["seats"] == [6, 7, 1, 2, 3]
    assert actions(table.events) == [(6, "post_sb", 50), (7, "post_bb", 100), (1, "call", 100)]


def undo(table: "Table") -> tuple[list, str | None]:
    """The dealer's undo key (or the tablet's ``undo`` command)."""
    return table.try_command("undo", role="dealer", user="test")


def started_hand(table: "Table") -> None:
    table.command("set_stacks", stacks={"1": 5000, "2": 5000, "3": 5000, "4": 5000})
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal()


def test_undo_takes_back_a_push_read_as_a_call_and_the_chips_are_read_again_with_the_declaration():
    table = Table()
    started_hand(table)
    table.chips(3, 500)  # one overchip: read as a call, but the player had said "raise"
    call = [e for e in table.events if e.type == "action"][-1]
    assert (call.public["seat"], call.public["action"]) == (3, "call")
    undone, refusal = undo(table)
    assert refusal is None
    assert [e.type for e in undone] == ["action_undone"]
    assert undone[0].public["undone"] == [{"seq": call.seq, "seat": 3, "action": "call", "to": 100}]
    assert undone[0].public["next"] == 3 and undone[0].public["pot"] == 150  # seat 3 is to act again
    assert table.controller.snapshot(secure=False)["betting"]["to_act"] == 3
    from rfid_table.ops.watch import describe_event  # what the live view shows the floor
    assert [describe_event({"type": e.type, **e.public}) for e in (call, undone[0])] == [
        "seat 3 calls 100", "undone by dealer/test: seat 3 call; seat 3 to act"]
    table.command("declare", seat=3, declaration="raise")
    produced = table.run(1.0)  # the 500 chip still lies in the zone: read again, now with the declaration
    assert actions(produced) == [(3, "raise", 500)]
    assert table.controller.snapshot(secure=False)["betting"]["to_act"] == 4


def test_undo_takes_back_a_declaration_entered_by_mistake():
    table = Table()
    started_hand(table)
    table.command("declare", seat=3, declaration="all-in")  # the wrong key
    undone, refusal = undo(table)
    assert refusal is None and undone[0].public["declaration"] == "all_in"
    produced = table.chips(3, 100)
    assert actions(produced) == [(3, "call", 100)]  # a call, not an all-in


def test_a_fold_a_closed_round_and_an_empty_round_cannot_be_undone():
    table = Table()
    table.command("set_stacks", stacks={"1": 5000, "2": 5000, "3": 5000, "4": 5000})
    assert "no betting is running" in undo(table)[1]
    table.chips(1, 25, 25)
    table.chips(2, 100)
    table.deal()
    assert "nothing to undo" in undo(table)[1]  # only the blinds so far: they are forced
    hole = [e.secret["card"] for e in table.events if e.type == "card_dealt" and e.public["seat"] == 3]
    for card in hole:
        table.place(card, zone="muck")
    table.run(0.8)
    events, refusal = undo(table)
    assert events == [] and "fold" in refusal and "muck" in refusal
    assert table.controller.snapshot(secure=False)["betting"]["folded"] == [3]


@pytest.mark.parametrize("returned", [True, False])
def test_after_a_misdeal_the_table_follows_the_wagers_going_back(returned):
    table = Table()
    started_hand(table)
    table.chips(3, 100)  # seat 3 calls: one action, not yet substantial
    misdeal = table.command("misdeal")
    assert "misdeal" in [e.type for e in misdeal]
    if returned:  # the dealer hands every wager back
        for zone in ("seat1.bets", "seat2.bets", "seat3.bets"):
            table.remove(*table.tags_in(zone))
        produced = table.run(2.0)  # a pile is taken as gone after 1 s unread
        back = [e for e in produced if e.type == "chips_returned"]
        assert [e.public for e in back] == [{"complete": True, "left_in_place": {},
                                             "returned": {"seat1.bets": 50, "seat2.bets": 100, "seat3.bets": 100}}]
    else:  # the call is returned, the blinds stay where they are for the new deal (the button does not move)
        table.remove(*table.tags_in("seat3.bets"))
        table.run(2.0)
        assert "chips_returned" not in [e.type for e in table.events]
    # the cards are gathered
    table.remove(*table.tags_in("muck"), *[u for s in (1, 2, 3, 4) for u in table.tags_in(f"seat{s}.cards")])
    table.run(3.0)
    before = len(table.events)
    table.deal()
    again = table.events[before:]
    back = [e.public for e in again if e.type == "chips_returned"]
    if returned:
        assert back == []
    else:
        assert back == [{"complete": False, "returned": {"seat3.bets": 100},
                         "left_in_place": {"seat1.bets": 50, "seat2.bets": 100}}]
        assert actions(again)[:2] == [(1, "post_sb", 50), (2, "post_bb", 100)]  # the blinds left in place
