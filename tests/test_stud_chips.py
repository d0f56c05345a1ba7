"""A stud hand read from the chips at a simulated table: the antes in the pot, the bring-in or the completion pushed
into the bring-in seat's betting zone, each later street opened by the seat its up cards name, the street closed by
the next street's first card or by the dealer collecting, the pots awarded at the showdown and the hand written as a
PHH hand history. Each test quotes the rule it shows."""

from __future__ import annotations

from controller import phh
from controller.cards import FULL_DECK
from controller.chip_betting import BettingSetup
from controller.game import GameController
from controller.table import TableSetup
from hal.zones import DebounceSettings
from sim.replay import chip_uid
from sim.stud_hands import stud_zones
from sim.table_driver import TableDriver, actions, debounce_by_pile, of

DECK = {f"E0040150C3{i + 1:06X}": card for i, card in enumerate(FULL_DECK)}
DENOMINATIONS = (1, 5, 25, 100)
# the stud table's zones and, after them, a betting zone per seat and the pot
ZONES = stud_zones() | {f"seat{s}.bets": ("main", 19 + s) for s in range(1, 9)} | {"pot": ("main", 28)}
ANTE, BRING_IN, SMALL_BET, BIG_BET = 1, 2, 5, 10


class StudTable(TableDriver):
    """Three players (seats 1 to 3) at stud of 1 ante, 2 bring-in, 5/10; the floor entered the stacks."""

    def __init__(self, game: str = "stud", rules: str = "tda", players=(1, 2, 3)):
        rack = {value: [chip_uid(d, n) for n in range(60)] for d, value in enumerate(DENOMINATIONS)}
        chips = {uid: value for value, uids in rack.items() for uid in uids}
        controller = GameController(
            TableSetup("stud-chips", 8, DECK, hole_cards=7, players=players, variant=game, rules=rules),
            BettingSetup(variant=game.upper(), small_blind=0, big_blind=0, ante=ANTE, chips=chips, chip_set="test",
                         rules=rules, bet_limits=(SMALL_BET, BIG_BET), bring_in=BRING_IN))
        debounce = debounce_by_pile(ZONES) | {z: DebounceSettings(2, 0.6, move_after_cycles=3) for z in ZONES
                                              if z.endswith((".cards", ".up"))}
        super().__init__(controller, ZONES, debounce=debounce, deck=DECK, rack=rack, move_s=0.3)
        self.command("set_stacks", stacks={str(s): 200 for s in players})
        for _ in players:
            self.chips("pot", ANTE, seconds=0.1)

    def third_street(self, hands: dict[int, str]) -> None:
        """Two down cards and the door card up, one round at a time from seat 1."""
        for r in range(3):
            for seat, cards in hands.items():
                self.put(cards.split()[r], f"seat{seat}.{'up' if r == 2 else 'cards'}")

    def street(self, burn: str, cards: dict[int, str], up: bool = True) -> None:
        self.put(burn, "burn")
        for seat, card in cards.items():
            self.put(card, f"seat{seat}.{'up' if up else 'cards'}")

    def collect(self) -> None:
        """The dealer sweeps the bets into the pot."""
        for seat in range(1, 9):
            self.place(*self.tags_in(f"seat{seat}.bets"), zone="pot")
        self.run(1.5)


def test_the_bring_in_seat_pushes_the_bring_in_and_the_next_seat_completes_to_the_small_bet():
    # PP Betting 16: "All wagers and calls of improper amounts are required to be brought up to proper size [...]
    # such as betting a smaller amount than the minimum bring-in"; TDA 43: at least half of a full raise is
    # completed to a full raise. The lowest door card (the 2 of diamonds, seat 2) brings it in.
    t = StudTable()
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    assert [e.public["seat"] for e in of(t.events, "bring_in")] == [2]
    started = of(t.events, "betting_started")[0].public
    assert (started["bring_in"], started["small_bet"], started["big_bet"]) == (BRING_IN, SMALL_BET, BIG_BET)
    assert [(e.public["seat"], e.public["added"]) for e in of(t.events, "action")] == [(1, 1), (2, 1), (3, 1)]
    t.chips(2, 1, 1)  # the bring-in of 2
    t.chips(3, 1, 1, 1, 1, 1)  # the small bet: the completion
    t.chips(1, 5)  # calls the completion
    t.chips(2, 1, 1, 1)  # the bring-in calls: 3 more
    # the completion raises the bring-in to the small bet (PHH: "cbr", pokerkit's complete_bet_or_raise_to)
    assert actions(t.events)[3:] == [(2, "bring_in", 2), (3, "raise", 5), (1, "call", 5), (2, "call", 5)]
    assert of(t.events, "chip_count") == []


def test_an_ante_put_in_after_third_street_is_dealt_pays_the_antes():
    # An ante is a forced bet, not an action (TDA 53: "Jede Aktion außerhalb der Reihe (Check, Call oder Raise)"), so
    # it may come after the deal, as a blind may (docs/betting.md). Seat 3's ante comes once third street is out:
    # nothing is counted when the betting begins, nor when the dealer collects third street's bets.
    t = StudTable()
    t.take(t.tags_in("pot")[0], seconds=1.0)  # one of the three antes is not in yet
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.chips("pot", ANTE)
    t.chips(2, 1, 1)  # the bring-in
    t.chips(3, 1, 1)  # calls it
    t.chips(1, 1, 1)
    t.collect()
    t.run(2.0)  # the pot is counted once it has lain still
    assert of(t.events, "chip_count") == []
    assert [e.public["total"] for e in of(t.events, "pots")] == [3 * ANTE + 3 * BRING_IN]


def test_a_single_chip_of_the_small_bet_facing_the_bring_in_is_a_call():
    # TDA 44 (PP Betting 15): "If a single chip is placed into the pot, and is larger than the bet, the player must
    # verbally declare a raise. If the player does not announce a raise, they are assumed to have only called."
    t = StudTable()
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.chips(2, 1, 1)
    t.chips(3, 5)
    call = of(t.events, "action")[-1].public
    assert (call["seat"], call["action"], call["to"], call["returned"]) == (3, "call", 2, 3)
    assert "PP Betting 15" in call["rules"]


def test_a_push_short_of_the_bring_in_is_brought_up_to_it_and_one_of_half_the_completion_completes():
    # PP Betting 16 (a bet smaller than the minimum bring-in is brought up to size); TDA 43 (the 50% rule): 4 in
    # chips against a bring-in of 2 and a small bet of 5 is at least half the way, so it completes to 5
    t = StudTable()
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.chips(2, 1)
    bring_in = of(t.events, "action")[-1].public
    assert (bring_in["action"], bring_in["to"], bring_in["owed"]) == ("bring_in", 2, 1)
    assert "PP Betting 16" in bring_in["rules"]

    t = StudTable()
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.chips(2, 1, 1, 1, 1)
    complete = of(t.events, "action")[-1].public
    assert (complete["seat"], complete["action"], complete["to"]) == (2, "bet", 5)  # the bring-in seat completes
    assert "TDA 43" in complete["rules"]


def test_a_stud_hand_bet_street_by_street_is_awarded_and_written_as_a_phh_hand_history():
    t = StudTable()
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.chips(2, 1, 1)  # brings it in
    t.chips(3, 1, 1)  # calls the bring-in
    t.put("Kd", "muck") and t.put("As", "muck") and t.put("9c", "muck")  # seat 1 folds
    t.collect()
    # fourth street: seat 3 shows K-2, seat 2 shows 2-8: the king acts first; checks are not seen
    t.street("Ac", {2: "8c", 3: "2h"})
    t.chips(2, 5)  # seat 2 bets after seat 3's unseen check
    t.chips(3, 5)
    # fifth street's first card: the dealer had not collected, the card ends fourth street
    t.street("Ad", {2: "8d", 3: "3h"})
    t.chips(2, 5, 5)  # seat 2's pair of eights acts first: the big bet
    t.chips(3, 5, 5)
    t.collect()
    t.street("Ah", {2: "5c", 3: "4h"})
    t.street("Kc", {2: "2c", 3: "5h"}, up=False)
    t.clear()
    t.run(2.5)
    assert actions(t.events)[3:] == [
        (2, "bring_in", 2), (3, "call", 2), (1, "fold", 0), (3, "check", 0), (2, "bet", 5), (3, "call", 5),
        (2, "bet", 10), (3, "call", 10), (2, "check", 0), (3, "check", 0), (2, "check", 0), (3, "check", 0)]
    assert [(e.public["street"], e.public["total"]) for e in of(t.events, "pots")] == [
        ("third", 7), ("fourth", 17), ("fifth", 37), ("sixth", 37), ("seventh", 37)]
    showdown = of(t.events, "showdown")[0].public
    # seat 3: 2-3-4-5-6 of mixed suits, a straight, against seat 2's pair of eights
    assert showdown["winners"] == [3] and showdown["payouts"] == {"3": 37}
    assert of(t.events, "chip_count") == [] and of(t.events, "bet_ruling") == []
    history = phh.loads(of(t.events, "hand_history")[0].secret["phh_complete"])
    assert history["variant"] == "F7S" and history["bring_in"] == BRING_IN
    assert history["finishing_stacks"] == [199, 182, 219]


def test_an_open_pair_on_fourth_street_lets_the_first_seat_bet_the_big_bet_in_chips():
    # CA Actions 3c: "If a player opens the betting round in Stud variants in the lower limit although a pair is
    # open [...]": with a pair showing on fourth street the big bet may be made (stud high, where the house allows it)
    t = StudTable(rules="casinos_austria")
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.chips(2, 1, 1)  # brings it in
    t.chips(3, 1, 1)
    t.chips(1, 1, 1)
    t.collect()
    t.street("Ac", {1: "9h", 2: "8c", 3: "2h"})  # seat 1 pairs its nines in the open: it acts first
    assert [(e.public["street"], e.public["seat"]) for e in of(t.events, "first_to_act")] == [("fourth", 1)]
    t.chips(1, 5, 5)
    bet = of(t.events, "action")[-1].public
    assert (bet["seat"], bet["action"], bet["to"]) == (1, "bet", BIG_BET)
    assert any(rule.startswith("CA Actions 3c") for rule in bet["rules"])
    t.chips(2, 5, 5)  # the others call the big bet
    assert actions(t.events)[-1] == (2, "call", BIG_BET)


def test_fourth_streets_first_card_before_the_third_street_round_is_over_goes_to_the_floor():
    # TDA 39 (cards dealt prematurely): the table cannot deal the street on; the floor rules, and the betting of
    # third street goes on where it was
    t = StudTable()
    t.third_street({1: "As Kd 9c", 2: "3s 4s 2d", 3: "6h 7h Ks"})
    t.chips(2, 1, 1)  # the bring-in; seats 3 and 1 have not acted
    t.street("Ac", {2: "8c"})
    [ruling] = of(t.events, "bet_ruling")
    assert (ruling.public["code"], ruling.public["seat"], ruling.public["rules"], ruling.public["needs_floor"]) == (
        "card_before_betting_over", 3, ["TDA 39"], True)
    t.chips(3, 1, 1)  # third street's betting is still read
    assert actions(t.events)[-1] == (3, "call", BRING_IN)


def test_a_bomb_pot_is_refused_at_a_stud_table():
    # CA GR 14.2, 14.3: a bomb pot and a flip are dealt a flop ("the croupier/croupière gives the "Flop"")
    t = StudTable()
    refusal = t.try_command("bomb_pot", amount=10)[1]
    assert refusal is not None and "a bomb pot or flip is a flop game's" in refusal
