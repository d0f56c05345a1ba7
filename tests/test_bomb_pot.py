"""Bomb pots and flips (CA GR 14.2, 14.3) on a simulated table, read from the chips and the cards through the zone
tracker."""

from __future__ import annotations

import pytest

from sim.table_driver import actions, of
from test_rulings import PLAYERS, Table


@pytest.mark.parametrize("kind", ["bomb_pot", "flip"])
def test_every_player_puts_the_agreed_amount_in_and_nothing_is_bet_before_the_flop(kind):
    """CA GR 14.3: "Bomb Pot: Each player bets an amount equal to the limit before the game and the
    croupier/croupière gives the "Flop" without another round of betting and the game continues normally after the
    "Flop"." CA GR 14.2: "Flip: Each player bets an amount equal to the limit before the game and the croupier deals
    the "board" without another round of betting and there is an immediate "showdown"." """
    table = Table()
    [agreed] = of(table.command("bomb_pot", amount=100, kind=kind), "bomb_pot_agreed")
    assert agreed.public["flip"] is (kind == "flip") and agreed.public["applies_to_hand"] == 1
    for seat in PLAYERS:
        table.chips(seat, 100)
    table.deal()
    [started] = of(table.events, "betting_started")
    assert started.public["bomb_pot"] == {"amount": 100, "flip": kind == "flip"}
    posted = [(a.public["seat"], a.public["added"]) for a in of(table.events, "action")
              if a.public["action"] == "ante"]
    assert sorted(posted) == [(s, 100) for s in PLAYERS]
    assert of(table.events, "chip_count") == []
    assert table.betting()["to_act"] is None and table.betting()["pot"] == 500
    table.burn()
    table.board(3)
    if kind == "bomb_pot":  # the flop's betting: seat 1, left of the button, acts first
        assert table.betting()["street"] == "flop" and table.betting()["to_act"] == 1
        table.chips(1, 100)
        assert actions(table.events)[-1] == (1, "bet", 100)
        return
    table.burn()
    table.board(1)
    table.burn()
    table.board(1)
    table.clear()
    table.run(3.0)
    [showdown] = of(table.events, "showdown")
    assert sum(int(v) for v in showdown.public["payouts"].values()) == 500
    assert not [a for a in actions(table.events) if a[1] not in ("ante", "check")]


def test_a_bomb_pot_is_agreed_before_the_deal_only():
    """CA GR 14.2/14.3: the amount goes in "before the game": once the deal has begun the agreement is refused."""
    table = Table()
    table.blinds()
    table.deal()
    events, refusal = table.try_command("bomb_pot", amount=100, role="dealer", user="bob")
    assert events == [] and "before the deal" in refusal


@pytest.mark.parametrize("flip", [False, True])
def test_pokerkit_plays_the_bomb_pot_written_as_phh_to_the_same_stacks(flip):
    """pokerkit models a bomb pot as a hand with antes, no blinds and no pre-flop betting: the engine's hand history
    of one (a flop bet, called) and of a flip replays in pokerkit to the engine's finishing stacks."""
    pokerkit = pytest.importorskip("pokerkit")
    from controller import phh as phhlib
    from controller.betting import NLHE, BettingHand
    from controller.showdown import award
    hand = BettingHand(NLHE, [1, 2, 3, 4], 4, {s: 5000 for s in (1, 2, 3, 4)}, (50, 100), bomb_pot=200, flip=flip)
    assert hand.to_act() is None and hand.pot_total() == 800
    assert hand.end_street().ok
    if not flip:
        hand.push(1, [100])
        for seat in (2, 3, 4):
            hand.push(seat, [100])
    while hand.status == "betting":
        while hand.to_act() is not None:
            hand.check(hand.to_act())
        assert hand.end_street().ok
    hole = {1: ["As", "Ad"], 2: ["Ks", "Kd"], 3: ["Qs", "Qd"], 4: ["Js", "Jd"]}
    board = ["2c", "7h", "9d", "3s", "4h"]
    finishing = dict(award(hand, hole, board).finishing_stacks)
    text = phhlib.dumps(phhlib.to_phh(hand, hole, board, [1, 2, 3, 4], finishing))
    *_, state = pokerkit.HandHistory.loads(text)
    assert list(state.stacks) == [finishing[s] for s in (1, 2, 3, 4)]


@pytest.mark.parametrize("players, flip", [(2, False), (3, False), (4, True)])
def test_rfid_table_replay_plays_a_bomb_pots_hand_history_on_the_table_and_reads_it_back(players, flip):
    """`rfid-table replay` (sim.replay): the PHH of a bomb pot or flip is played as table activity — the agreement
    entered before the deal, every player's amount, the flop bet and calls — and the controller reads back the same
    hand, heads-up too."""
    pytest.importorskip("phevaluator")
    from controller import phh as phhlib
    from controller.betting import NLHE, BettingHand
    from controller.showdown import award
    from sim.replay import ReplayTable
    seats = list(range(1, players + 1))
    hand = BettingHand(NLHE, seats, players, {s: 1000 for s in seats}, (50, 100), bomb_pot=100, flip=flip)
    assert hand.end_street().ok
    if not flip:
        assert hand.declare(1, "bet", 200).ok and hand.push(1, [200]).ok
        for seat in seats[1:]:
            assert hand.declare(seat, "call").ok and hand.push(seat, [200]).ok
    while hand.status == "betting":
        while hand.to_act() is not None:
            hand.check(hand.to_act())
        assert hand.end_street().ok
    hole = {s: [["As", "Ad"], ["Ks", "Kd"], ["Qs", "Qd"], ["Js", "Jd"]][s - 1] for s in seats}
    board = ["2c", "7h", "9d", "3s", "4h"]
    finishing = award(hand, hole, board).finishing_stacks
    text = phhlib.dumps(phhlib.to_phh(hand, hole, board, seats, finishing))
    result = ReplayTable(pace_s=0.5, settle_s=0.4, deal_s=0.05).replay(phhlib.loads(text), "bomb pot")
    assert result.ok, result.reason
    assert result.reconstructed["_bomb_pot"] == 100 and result.reconstructed.get("_flip", False) is flip
