"""Where the house rule books disagree (controller/rules.py's profiles), each house rules as its own book says:
scenarios played on a simulated table, read through the zone tracker into the controller, one per house whose book
speaks to the point. Each test quotes its rule from ``shared/rules/``."""

from __future__ import annotations

import pytest

from sim.table_driver import actions, of
from test_rulings import Table, preflop_called


pytest.importorskip("phevaluator")


def heads_up_all_in(rules: str, stack: int) -> Table:
    """Heads-up, seat 2 on the button posts the small blind of 25; both all-in for ``stack`` before the flop."""
    table = Table(rules, players=(1, 2), button=2, blinds=(25, 50), stack=stack)
    table.chips(2, 25)
    table.chips(1, 25, 25)
    table.deal(seats=(1, 2))
    table.command("declare", seat=2, declaration="all_in")
    table.chips(2, *[25] * ((stack - 25) // 25))
    table.chips(1, *[25] * ((stack - 50) // 25))
    assert table.betting()["to_act"] is None and table.betting()["pot"] == 2 * stack
    return table


# ---- run it twice: the pot it needs (CA Actions 8c) ----------------------------------------------------------

@pytest.mark.parametrize("stack, taken", [(225, False), (250, True)])
def test_casinos_austria_runs_a_board_twice_only_for_a_pot_of_at_least_500(stack, taken):
    """CA Actions 8: "the river card, the turn and river card, as well as the entire board can be dealt twice if,
    [...] c.) there is at least € 500 in the pot". Both players all-in: a pot of 450 is refused with the rule named,
    a pot of 500 is run twice."""
    table = heads_up_all_in("casinos_austria", stack)
    produced, refusal = table.try_command("run_it", times=2)
    if taken:
        assert refusal is None and of(produced, "run_it_agreed")
    else:
        assert refusal is not None and "450" in refusal and "500" in refusal and "CA Actions 8c" in refusal
        assert not of(produced, "run_it_agreed")


@pytest.mark.parametrize("rules", ["tda", "poker_play", "allin_club", "club_tournament_de"])
def test_a_house_whose_book_sets_no_minimum_runs_a_small_pot_twice(rules):
    """Only CA Actions 8c sets a minimum pot for running the board twice; the other books say nothing of running it
    twice, and a pot of 100 is run twice when the players agree."""
    table = heads_up_all_in(rules, 50)
    produced, refusal = table.try_command("run_it", times=2)
    assert refusal is None and of(produced, "run_it_agreed")


# ---- action out of turn (TDA 53, PP Betting 10) --------------------------------------------------------------

def flop_bet_by_seat_1(rules: str) -> Table:
    """Five players see the flop for 100 each (tests/test_rulings.py's preflop_called); seat 1 bets 100 on it."""
    table = Table(rules)
    preflop_called(table)
    table.burn()
    table.board(3)
    table.chips(1, 100)
    assert actions(table.events)[-1] == (1, "bet", 100) and table.betting()["to_act"] == 2
    return table


def test_poker_play_dismisses_a_declaration_out_of_turn_without_penalty():
    """PP Betting 10: "A verbal declaration that is out of turn will be dismissed and no penalties will be infringed
    on the player responsible." Seat 4 says "raise" while seat 2 is to act: nothing is held, and on its turn seat 4
    raises to 300."""
    table = flop_bet_by_seat_1("poker_play")
    [dismissed] = [e for e in table.command("declare", seat=4, declaration="raise", role="dealer")
                   if e.type == "bet_ruling"]
    assert dismissed.public["code"] == "dismissed" and "PP Betting 10" in dismissed.public["rules"][0]
    table.chips(2, 100)
    table.chips(3, 100)
    table.command("declare", seat=4, declaration="raise", role="dealer")
    table.chips(4, 100, 100, 100)
    assert actions(table.events)[-3:] == [(2, "call", 100), (3, "call", 100), (4, "raise", 300)]


def test_poker_play_bars_a_raise_on_the_next_turn_of_a_player_who_pushed_out_of_turn():
    """PP Betting 10: "If a player deliberately moves out of turn, and acts ahead of another player, they will not be
    allowed to raise the pot on their next turn to act." Seat 4 pushes 100 while seat 2 is to act; seat 2 raises to
    300, so the push does not stand; on its turn seat 4 pushes chips of 400 more, 500 in all, a full raise anywhere
    else (as the TDA table below reads it): at this house it is a call of 300 and 200 go back."""
    def play(rules: str) -> Table:
        table = flop_bet_by_seat_1(rules)
        table.chips(4, 100)
        assert table.betting()["to_act"] == 2
        table.command("declare", seat=2, declaration="raise", role="dealer")
        table.chips(2, 100, 100, 100)
        table.chips(3, 100, 100, 100)
        table.chips(4, 100, 100, 100, 100)
        return table

    assert actions(play("tda").events)[-1] == (4, "raise", 500)
    table = play("poker_play")
    assert actions(table.events)[-3:] == [(2, "raise", 300), (3, "call", 300), (4, "call", 300)]
    assert table.betting()["to_act"] == 5 and table.betting()["bets"]["4"] == 300


@pytest.mark.parametrize("rules", ["tda", "casinos_austria", "allin_club", "club_tournament_de"])
def test_chips_pushed_out_of_turn_bind_when_the_action_does_not_change(rules):
    """TDA 53: "Aktionen außerhalb der Reihe sind bindend, wenn sich die Aktion bis zum Spieler, der außerhalb der
    Reihe gehandelt hat, nicht ändert" (AC 34, CA Actions 2 alike; DE 14 follows the TDA). Seat 4 pushes 100 while
    seat 2 is to act; seats 2 and 3 call: seat 4's push stands as its call."""
    table = flop_bet_by_seat_1(rules)
    table.chips(4, 100)
    table.chips(2, 100)
    table.chips(3, 100)
    assert actions(table.events)[-3:] == [(2, "call", 100), (3, "call", 100), (4, "call", 100)]
    assert table.betting()["to_act"] == 5
