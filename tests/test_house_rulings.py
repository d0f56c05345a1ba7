"""Where the house rule books disagree (controller/rules.py's profiles), each house rules as its own book says:
scenarios played on a simulated table, read through the zone tracker into the controller, one per house whose book
speaks to the point. Each test quotes its rule from ``shared/rules/``."""

from __future__ import annotations

import pytest

from sim.table_driver import of
from test_rulings import Table

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
