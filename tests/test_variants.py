"""The cash-game variants on a simulated table, read from the chips and the cards through the zone tracker: 7-card
Omaha (CA GR 15), a hand run twice (CA Actions 8), the double board (CA GR 14.1)."""

from __future__ import annotations

import pytest

from controller.chip_betting import BettingSetup
from controller.game import GameController
from controller.table import TableSetup
from test_rulings import Table, of

pytest.importorskip("phevaluator")


class VariantTable(Table):
    """The rulings' table dealing ``variant`` (a key of controller.betting.VARIANTS) with ``hole_cards`` each."""

    def __init__(self, variant: str, hole_cards: int, players=(1, 2, 3, 4, 5), button: int = 5, **betting):
        super().__init__(players=players, button=button)
        self.controller = GameController(
            TableSetup("variants", 10, self.deck, decks={"A": self.deck}, deck_id="A", players=tuple(players),
                       button=button, hole_cards=hole_cards),
            BettingSetup(variant=variant, small_blind=50, big_blind=100, chip_set="test", **betting,
                         chips={uid: value for value, uids in self.rack.items() for uid in uids}))
        self.players = tuple(players)
        self.command("set_stacks", stacks={str(s): 5000 for s in players})


def test_seven_card_omaha_is_dealt_seven_cards_and_pays_the_hand_of_two_hole_and_three_board_cards():
    """CA GR 15.1: "5 players maximum 7 cards". Five players are dealt seven cards each (35 of the deck); everyone
    calls the big blind and checks to the river. The board has four spades: seat 3's one spade in hand makes no
    Omaha flush (exactly two hole cards), seat 4's two spades do and win the 500."""
    table = VariantTable("PLO7", 7)
    hands = {1: "2h 3h 4d 5d 6c 7c 8h", 2: "9h Th Jd Qd 2d 3d 4c", 3: "As Kh Kd Kc Qh 5h 6h",
             4: "4s 5s 7h 7d 8c 8d 9c", 5: "Ah Ad Ac Qc Tc Jc Jh"}
    order = [1, 2, 3, 4, 5]
    table.blinds()
    for rnd in range(7):  # the dealer pitches the cards round by round from the seat left of the button
        for seat in order:
            card = hands[seat].split()[rnd]
            table.hole.setdefault(seat, []).append(card)
            table.card(f"seat{seat}.cards", card, seconds=0.1)
    table.run(0.6)
    assert [e.public["count"] for e in of(table.events, "card_dealt") if e.public["seat"] == 1] == list(range(1, 8))
    assert not of(table.events, "irregular_card")
    for seat in (3, 4, 5):
        table.chips(seat, 100)
    table.chips(1, 25, 25)
    for burn, cards in (("6s", ("2s", "7s", "9s")), ("8s", ("Js",)), ("Ts", ("3c",))):
        table.card("burn", burn)
        for card in cards:
            table.card("board", card)
    table.field.clear()
    table.run(3.0)
    [showdown] = of(table.events, "showdown")
    assert showdown.public["payouts"] == {"4": 500}
    assert not of(table.events, "irregular_card") and not of(table.events, "bet_ruling")
