"""Pots divided between runs and boards (CA Actions 8, 8e, 8f; CA GR 14.1), worked out by hand, and 7-card Omaha."""

from __future__ import annotations

import importlib.util

import pytest

from controller.betting import NLHE, PLO7, BettingHand
from controller.rules import CASINOS_AUSTRIA, TDA
from controller.runouts import boards_of_pots, divide
from controller.showdown import award, hand_rank

needs_evaluator = pytest.mark.skipif(importlib.util.find_spec("phevaluator") is None,
                                     reason="phevaluator is not installed")


# ---- the arithmetic ---------------------------------------------------------------------------------------------

def test_two_runs_won_by_different_players_split_the_pot_in_halves():
    # 1000 run twice, seat 2 wins run 1, seat 5 run 2: 500 each, nothing odd
    d = divide(1000, {0: [2], 1: [5]}, [2, 5], 1)
    assert dict(d.shares) == {2: 500, 5: 500} and d.odd_chips == ()
    assert [(p.board, p.amount, p.winners) for p in d.parts] == [(0, 500, (2,)), (1, 500, (5,))]


def test_the_odd_chip_between_two_runs_goes_to_the_worse_position():
    """CA Actions 8f: "The odd chip always goes to the worse position (clockwise from the button on the left)."
    Button on seat 6, so seat 7 is first left of it. 1005 in units of 5 is 201 units: 100 per run, 1 left over,
    to seat 7 (the worse position) although seat 3 won the first run."""
    order = [7, 8, 1, 3]  # clockwise from the button's left
    d = divide(1005, {0: [3], 1: [7]}, order, 5)
    assert dict(d.shares) == {3: 500, 7: 505} and d.odd_chips == (7,)


def test_three_runs_leave_two_odd_units_for_two_winners_one_each():
    # 1100 in units of 100 = 11 units: 3 per run, 2 left; winners seat 4 (runs 1 and 3) and seat 1 (run 2);
    # worse position first from the button's left: the order is 4, 1 → one each (PP Ties 4)
    d = divide(1100, {0: [4], 1: [1], 2: [4]}, [4, 1], 100)
    assert dict(d.shares) == {4: 700, 1: 400} and d.odd_chips == (4, 1)


def test_one_player_winning_every_run_takes_the_whole_pot_with_its_odd_units():
    d = divide(1001, {0: [3], 1: [3], 2: [3]}, [3, 5], 1)
    assert dict(d.shares) == {3: 1001}


def test_a_tie_on_one_run_splits_that_run_and_its_odd_unit_goes_to_the_worse_position():
    # 1000 run twice: run 1 seat 2 alone (500); run 2 tie of 2 and 6 (250 each). Units of 1: no odd unit.
    assert dict(divide(1000, {0: [2], 1: [6, 2]}, [6, 2], 1).shares) == {2: 750, 6: 250}
    # 1002 run twice: 501 per run; run 2 tie: 250 and 251, the odd one to seat 6 (earlier in the order)
    d = divide(1002, {0: [2], 1: [6, 2]}, [6, 2], 1)
    assert dict(d.shares) == {2: 751, 6: 251}
    assert d.parts[1].odd_chips == (6,)


def test_a_pot_below_the_unit_keeps_its_remainder_with_the_first_in_the_order():
    # 1003 in units of 5: 200 units (1000) + 3 below the unit; 100 units a run; the 3 go to the first: seat 1
    d = divide(1003, {0: [1], 1: [2]}, [1, 2], 5)
    assert dict(d.shares) == {1: 503, 2: 500}


def test_refusals_name_what_is_wrong():
    with pytest.raises(ValueError, match="at least one winner"):
        divide(100, {0: []}, [1], 1)
    with pytest.raises(ValueError, match="not in the odd-chip order"):
        divide(100, {0: [3]}, [1], 1)
    with pytest.raises(ValueError, match="not 4 times"):
        boards_of_pots(1, 4)


def test_which_boards_each_pot_plays():
    """CA Actions 8e: a pot not agreed for running twice plays the first run only."""
    assert boards_of_pots(2, 2) == [[0, 1], [0, 1]]
    assert boards_of_pots(2, 2, run_pots=[1]) == [[0], [0, 1]]
    assert boards_of_pots(1, 1, 2) == [[0, 1]]  # a double board
    assert boards_of_pots(2, 2, 2, run_pots=[1]) == [[0, 1], [0, 1, 2, 3]]


# ---- through the showdown ---------------------------------------------------------------------------------------

def _all_in_three_way():
    """Seat 1 (button) 300, seat 2 1000, seat 3 1000, no blinds' surprises: everyone all-in pre-flop.
    Main pot 900 (seats 1, 2, 3), side pot 1400 (seats 2, 3)."""
    stacks = {1: 300, 2: 1000, 3: 1000}
    hand = BettingHand(NLHE, [1, 2, 3], 1, stacks, (50, 100))
    for seat in (1, 2, 3):  # seat 1 is first to act three-handed pre-flop (left of the big blind)
        assert hand.declare(seat, "all_in").ok
        assert hand.push(seat, [hand.seat_state(seat)["owed"]]).ok
    while hand.status == "betting":
        assert hand.end_street().ok
    assert [(p.amount, p.eligible) for p in hand.pots()] == [(900, (2, 3, 1)), (1400, (2, 3))]
    return hand


HOLE = {1: ["As", "Ad"], 2: ["Ks", "Kd"], 3: ["Qs", "Qd"]}
RUN_1 = ["2c", "7h", "9d", "3s", "4h"]  # aces hold
RUN_2 = ["Qh", "7c", "9s", "3d", "4c"]  # queens make a set


@needs_evaluator
def test_run_twice_only_for_the_side_pot_leaves_the_main_pot_to_the_first_run():
    """CA Actions 8e: the players agreed to run the side pot twice. The main pot (900) goes by the first run
    alone: seat 1's aces. The side pot (1400) is halved: run 1 seat 2's kings beat seat 3's queens (700), run 2
    seat 3's set of queens (700)."""
    hand = _all_in_three_way()
    result = award(hand, HOLE, boards=[RUN_1, RUN_2], runs=2, run_pots=[1])
    main, side = result.pots
    assert dict(main.shares) == {1: 900} and "CA Actions 8e" in main.rules and not main.boards
    assert dict(side.shares) == {2: 700, 3: 700} and "CA Actions 8f" in side.rules
    assert [(p.board, p.winners) for p in side.boards] == [(0, (2,)), (1, (3,))]
    assert result.finishing_stacks == {1: 900, 2: 700, 3: 700}


@needs_evaluator
def test_run_twice_for_every_pot_halves_the_main_pot_too():
    # main pot 900: run 1 seat 1 (450), run 2 seat 3 (450); side as before
    hand = _all_in_three_way()
    result = award(hand, HOLE, boards=[RUN_1, RUN_2], runs=2)
    assert dict(result.pots[0].shares) == {1: 450, 3: 450}
    assert result.payouts == {1: 450, 2: 700, 3: 1150}
    assert len(result.board_ranks) == 2


@needs_evaluator
def test_the_run_twice_odd_chip_goes_left_of_the_button_even_where_the_house_gives_it_to_the_button():
    """CA GR 8 gives a single board's odd chip to the winner closest to the button; CA Actions 8f gives the odd chip
    of a pot run twice to the worse position. Heads-up, button seat 1 (small blind) and seat 2: pot 2 × 125 = 250
    in units of 50 (the CA small blind) is 5 units: 2 per run and one left, which goes to seat 2 (left of the
    button) although seat 1 won the first run."""
    hand = BettingHand(NLHE, [1, 2], 1, {1: 125, 2: 125}, (50, 100), rules=CASINOS_AUSTRIA)
    for seat in (1, 2):
        assert hand.declare(seat, "all_in").ok
        assert hand.push(seat, [hand.seat_state(seat)["owed"]]).ok
    while hand.status == "betting":
        assert hand.end_street().ok
    hole = {1: ["As", "Ad"], 2: ["Qs", "Qd"]}
    result = award(hand, hole, boards=[RUN_1, RUN_2], runs=2)
    assert result.payouts == {1: 100, 2: 150}
    assert result.pots[0].odd_chips == (2,)


@needs_evaluator
def test_a_double_board_divides_the_pot_equally_between_the_boards():
    """CA GR 14.1: "The pot is divided equally between these "Boards"." Same three-way all-in on two boards dealt
    every hand: each pot is halved between board 1 and board 2, as the runs above but with every pot."""
    hand = _all_in_three_way()
    result = award(hand, HOLE, boards=[RUN_1, RUN_2], double_board=True)
    assert result.payouts == {1: 450, 2: 700, 3: 1150}
    assert "CA GR 14.1" in result.pots[0].rules


@needs_evaluator
def test_seven_card_omaha_uses_exactly_two_hole_cards_and_three_of_the_board():
    """Omaha: the best hand of exactly two hole cards and three board cards. Seat 1 holds four spades among seven
    cards; with four spades on the board a hold'em reading would give a flush to one spade in hand, Omaha needs two."""
    board = ["2s", "7s", "9s", "Js", "3d"]
    one_spade = ["As", "Kh", "Kd", "Qc", "8h", "4c", "5d"]  # Omaha: a pair of kings, no flush
    two_spades = ["4s", "5s", "6h", "6d", "Tc", "Th", "8c"]  # Omaha: a flush (4s 5s + three spades)
    assert hand_rank(PLO7, one_spade, board) > hand_rank(PLO7, two_spades, board)
    assert hand_rank(NLHE, one_spade[:2], board) < hand_rank(NLHE, two_spades[:2], board)  # hold'em: ace flush
    with pytest.raises(ValueError, match="duplicate"):
        hand_rank(PLO7, ["2s", "Kh", "Kd", "Qc", "8h", "4c", "5d"], board)


@needs_evaluator
def test_seven_card_omaha_hand_goes_to_the_showdown_and_pays_the_omaha_winner():
    stacks = {s: 1000 for s in (1, 2, 3)}
    hand = BettingHand(PLO7, [1, 2, 3], 3, stacks, (5, 10), rules=TDA)
    while hand.status == "betting":
        while hand.to_act() is not None:
            seat = hand.to_act()
            owed = hand.to_call(seat)
            if owed:
                assert hand.declare(seat, "call").ok and hand.push(seat, [owed]).ok
            else:
                assert hand.check(seat).ok
        assert hand.end_street().ok
    board = ["2s", "7s", "9s", "Js", "3d"]
    hole = {1: ["As", "Kh", "Kd", "Qc", "8h", "4c", "5d"], 2: ["4s", "5s", "6h", "6d", "Tc", "Th", "8c"],
            3: ["Ah", "Ac", "2h", "3h", "Qd", "Qh", "9c"]}
    result = award(hand, hole, board)
    assert result.pots[0].winners == (2,) and result.payouts[2] == 30
