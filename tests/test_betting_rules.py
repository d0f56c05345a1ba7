"""The worked examples of the rule books, each as a scenario with the ruling its source expects.

TDA: ``shared/rules/poker-tda-rules.de.txt`` (rules 43–47, 51–53 with their examples); CA: Casinos Austria ACTIONS;
AC: ALLIN club rules 34–43; PP: Poker-Play house rules, Betting and Ties. Where house profiles disagree, one test per
profile. Test names carry the rule and example number.
"""

from __future__ import annotations

import importlib.util

import pytest

from controller.betting import FLHE, NLHE, PLO, BettingHand
from controller.rules import ALLIN_CLUB, CASINOS_AUSTRIA, CLUB_TOURNAMENT_DE, POKER_PLAY, PROFILES, TDA
from controller.showdown import award, split_pot, odd_chip_order

BIG = 1_000_000

# Hand evaluation needs phevaluator (a runtime dependency of controller.showdown); skip, loudly, where it is missing.
needs_evaluator = pytest.mark.skipif(
    importlib.util.find_spec("phevaluator") is None,
    reason="phevaluator is not installed: add phevaluator>=0.5.3.1 to the dependencies",
)


def hand(stacks, blinds=(50, 100), button=None, variant=NLHE, rules=TDA, **kw) -> BettingHand:
    seats = sorted(stacks)
    return BettingHand(variant, seats, button if button is not None else seats[-1], stacks, blinds, rules=rules, **kw)


def to(h: BettingHand, seat: int, amount: int):
    """Bet or raise *to* ``amount`` with a declaration and the exact chips (no interpretation rules involved)."""
    before = h.bets[seat]
    r = h.declare(seat, "bet" if h.current_bet == 0 else "raise", amount)
    assert r.ok, r
    if h.seat_state(seat)["owed"]:
        assert h.push(seat, [amount - before]).ok
    return r.actions[-1]


def call(h: BettingHand, seat: int):
    r = h.declare(seat, "call")
    assert r.ok, r
    owed = h.seat_state(seat)["owed"]
    if owed:
        assert h.push(seat, [owed]).ok
    return r.actions[-1]


def limp_to_flop(h: BettingHand) -> None:
    """Everyone calls the big blind, the big blind checks, the dealer collects."""
    while h.to_act() is not None:
        seat = h.to_act()
        if h.to_call(seat):
            call(h, seat)
        else:
            assert h.check(seat).ok
    assert h.end_street().ok


def last(r):
    assert r.ok, r
    return r.actions[-1]


# ---- TDA 43: raise amounts ------------------------------------------------------------------------------


def test_tda43_example1_min_raise_is_the_largest_raise_of_the_round():
    """Flop 100-200: A bets 600, B raises by 1,000 to 1,600, C by 2,000 to 3,600: D's minimum is 5,600."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG}, blinds=(100, 200), button=5)
    limp_to_flop(h)
    to(h, 1, 600)
    to(h, 2, 1600)
    to(h, 3, 3600)
    assert h.to_act() == 4 and h.min_raise_to() == 5600


def test_tda43_example2_short_all_in_does_not_raise_the_minimum():
    """50-100 pre-flop: UTG all-in for 150; the next raise must still be at least 100 more, to 250."""
    h = hand({1: BIG, 2: BIG, 3: 150, 4: BIG}, button=4)
    a = last(h.declare(3, "all_in"))
    assert a.kind == "all_in" and a.to_amount == 150 and not a.full
    assert h.to_act() == 4 and h.min_raise_to() == 250


def test_tda43_example3_two_chips_raise_and_the_next_minimum():
    """Turn 100-200: A bets 300, B silently throws two 500s: a raise to 1,000; C's minimum raise is to 1,700."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 300)
    a = last(h.push(2, [500, 500]))
    assert (a.kind, a.to_amount, a.returned, a.owed) == ("raise", 1000, 0, 0)
    assert h.to_call(3) == 1000 and h.min_raise_to() == 1700


def test_tda43_example4a_three_raises():
    """25-50: A raises to 125, B to 200, C to 500: D must raise at least 300 more, to 800."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG, 6: BIG}, blinds=(25, 50), button=6)
    to(h, 3, 125)
    to(h, 4, 200)
    to(h, 5, 500)
    assert h.to_act() == 6 and h.min_raise_to() == 800


def test_tda43_example4b_one_large_raise():
    """Same 500 for D, but from one raise of 450 (A to 500, B and C call): D calls 500 or raises to 950."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG, 6: BIG}, blinds=(25, 50), button=6)
    to(h, 3, 500)
    call(h, 4)
    call(h, 5)
    assert h.to_call(6) == 500 and h.min_raise_to() == 950


def test_tda43_1_silent_1400_against_1000_is_a_call():
    """TDA 43-1: first bet 1,000; silently 1,400 in chips is a call (less than half a raise more); 400 goes back."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 1000)
    a = last(h.push(2, [1000, 100, 100, 100, 100]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 1000, 400)
    assert "TDA 43" in a.rules


def test_tda43_1_spoken_1400_is_read_like_the_chips():
    """TDA 43-1: saying "fourteen hundred" (an amount without "raise") is the same as putting 1,400: a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 1000)
    a = last(h.declare(2, "bet", 1400))
    assert (a.kind, a.to_amount) == ("call", 1000)


def test_tda43_1_raise_declared_with_1400_must_be_a_full_raise():
    """TDA 43-1: with "raise" declared first, 1,400 is not a call: the minimum raise to 2,000 is owed."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 1000)
    assert h.declare(2, "raise").code == "declared"
    a = last(h.push(2, [1000, 100, 100, 100, 100]))
    assert (a.kind, a.to_amount, a.owed) == ("raise", 2000, 600)


def test_tda43_2_raise_amount_is_the_total():
    """TDA 43-2: A bets 2,000, B says "raise eight thousand": the total is 8,000."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(500, 1000), button=3)
    limp_to_flop(h)
    to(h, 1, 2000)
    a = last(h.declare(2, "raise", 8000))
    assert (a.kind, a.to_amount, a.owed) == ("raise", 8000, 8000)


# ---- TDA 44: overchips ----------------------------------------------------------------------------------


def test_tda44_single_overchip_facing_a_bet_is_a_call():
    """TDA 44 (CA Actions 4; PP Betting 15; AC 37): facing 300, one 1,000 chip without "raise" calls; 700 back."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 300)
    a = last(h.push(2, [1000]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 300, 700)
    assert "TDA 44" in a.rules


def test_tda44_overchip_facing_the_blind_is_a_call():
    """TDA 44: after a blind too: UTG's single 500 chip against the 100 big blind is a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, button=4)
    a = last(h.push(3, [500]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 100, 400)


def test_tda44_overchip_with_last_chip_is_a_call():
    """TDA 44: "including your last chip": the player is not all-in, the change goes back."""
    h = hand({1: BIG, 2: 1000, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 300)
    a = last(h.push(2, [800]))
    assert (a.kind, a.to_amount, a.all_in, a.returned) == ("call", 300, False, 500)


def test_tda44_raise_declared_overchip_is_the_most_that_chip_allows():
    """TDA 44: "raise" declared, no amount, one 1,000 chip facing 300: a raise to 1,000."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 300)
    h.declare(2, "raise")
    a = last(h.push(2, [1000]))
    assert (a.kind, a.to_amount, a.returned) == ("raise", 1000, 0)


def test_tda44_raise_declared_overchip_pot_limit_is_capped_at_the_pot():
    """CA Actions 4: in pot limit "raise" with a higher chip is the maximum permitted, up to the chip's value."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(50, 100), button=3, variant=PLO)
    limp_to_flop(h)  # pot 300
    to(h, 1, 100)  # pot 400; B's maximum: call 100, raise 500 → 600
    h.declare(2, "raise")
    a = last(h.push(2, [5000]))
    assert (a.kind, a.to_amount, a.returned) == ("raise", 600, 4400)


def test_tda44_overchip_with_no_bet_bets_its_full_value():
    """TDA 44 (CA Actions 4, AC 37): no bet before: a silent single 1,000 chip is a bet of 1,000."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    a = last(h.push(1, [1000]))
    assert (a.kind, a.to_amount) == ("bet", 1000)


def test_tda44_overchip_with_no_bet_pot_limit_is_reduced_to_the_pot():
    """TDA 44 with TDA 52-2: in pot limit the full chip value over the pot is reduced to the pot."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(50, 100), button=3, variant=PLO)
    limp_to_flop(h)  # pot 300
    a = last(h.push(1, [1000]))
    assert (a.kind, a.to_amount, a.returned) == ("bet", 300, 700)


# ---- TDA 45: several chips ------------------------------------------------------------------------------


def test_tda45_1_example1_each_chip_needed_is_a_call():
    """A 400, B raises to 1,100, C silently 500 + 1,000: removing the 500 leaves less than 1,100: a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(100, 200), button=4)
    limp_to_flop(h)
    to(h, 1, 400)
    to(h, 2, 1100)
    a = last(h.push(3, [500, 1000]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 1100, 400)
    assert "TDA 45-1" in a.rules


def test_tda45_1_example2_last_two_chips_call():
    """25-50, A bets 1,050, B puts in his last chips, two 1,000s: a call (not all-in), 950 back."""
    h = hand({1: BIG, 2: 2050, 3: BIG}, blinds=(25, 50), button=3)
    limp_to_flop(h)
    to(h, 1, 1050)
    a = last(h.push(2, [1000, 1000]))
    assert (a.kind, a.to_amount, a.returned, a.all_in) == ("call", 1050, 950, False)


def test_tda45_example1a_two_thousands_against_1200():
    """Example 1-A: flop bet 1,200, two 1,000 chips silently: a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 1200)
    assert last(h.push(2, [1000, 1000])).kind == "call"


def test_tda45_example1b_500_and_1000_against_1100():
    """Example 1-B: 250-500, UTG raises to 1,100, UTG+1 silently 500 + 1,000: a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG}, blinds=(250, 500), button=5)
    to(h, 3, 1100)
    a = last(h.push(4, [500, 1000]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 1100, 400)


def test_tda45_example2_fifty_percent_makes_a_full_raise():
    """Example 2: UTG+1 silently 1,000 + five 100s (1,500): 50% of the 600 raise reached: a raise to 1,700."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG}, blinds=(250, 500), button=5)
    to(h, 3, 1100)
    a = last(h.push(4, [1000, 100, 100, 100, 100, 100]))
    assert (a.kind, a.to_amount, a.owed) == ("raise", 1700, 200)
    assert "TDA 43" in a.rules


def test_tda45_example3_under_fifty_percent_is_a_call():
    """Example 3: 1,000 + three 100s (1,300): under 50% of the raise: a call, 200 back."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG}, blinds=(250, 500), button=5)
    to(h, 3, 1100)
    a = last(h.push(4, [1000, 100, 100, 100]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 1100, 200)


def test_tda45_example4a_minimum_raise_obligatory():
    """Example 4-A: A bets 1,400, B (deep) silently 1,000 + three 500s: past the 2,100 threshold: raise to 2,800."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 1400)
    a = last(h.push(2, [1000, 500, 500, 500]))
    assert (a.kind, a.to_amount, a.owed) == ("raise", 2800, 300)


def test_tda45_example4b_under_threshold_is_a_call():
    """Example 4-B: 1,000 + two 500s (2,000) is under 2,100: a call, 600 back."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 1400)
    a = last(h.push(2, [1000, 500, 500]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 1400, 600)


@pytest.mark.parametrize("chips, expected_to", [([1000, 500, 500, 500], 2500), ([1000, 500, 500], 2000)])
def test_tda45_example4_note_last_chips_are_all_in(chips, expected_to):
    """Note to 4-A/4-B (TDA 45-2-2): with his last chips B is all-in whatever the 50% rule says."""
    h = hand({1: BIG, 2: 200 + sum(chips), 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    to(h, 1, 1400)
    a = last(h.push(2, chips))
    assert (a.kind, a.base, a.to_amount, a.all_in) == ("all_in", "raise", expected_to, True)
    assert "TDA 45-2" in a.rules


# ---- TDA 46: chips of an earlier bet still on the table -------------------------------------------------


def bb_with_two_25s_facing_600():
    """Situation 1's set-up: 25-50, the big blind posted two 25s, the button raises to 600."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(25, 50), button=3, forced_bet_chips={2: [25, 25]})
    to(h, 3, 600)
    assert h.fold(1).ok
    return h


def test_tda46_situation1_overchip_on_prior_chips_is_a_call():
    """1: a 1,000 chip on the two 25s is a call; 450 back."""
    h = bb_with_two_25s_facing_600()
    a = last(h.push(2, [1000]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 600, 450)
    assert "TDA 46-3-1" in a.rules


@pytest.mark.parametrize("chips", [[500, 500], [100, 500]])
def test_tda46_situation1_every_new_chip_needed_is_a_call(chips):
    """2: two 500s, or a 100 and a 500, on the 25s: every new chip is needed with the old ones: a call."""
    h = bb_with_two_25s_facing_600()
    a = last(h.push(2, chips))
    assert (a.kind, a.to_amount) == ("call", 600)


def test_tda46_situation1_spare_new_chip_goes_by_rule_45():
    """3: a 1,000 and a 500 on the 25s: the 500 is not needed: rule 45, 50% reached: a raise to 1,550."""
    h = bb_with_two_25s_facing_600()
    a = last(h.push(2, [1000, 500]))
    assert (a.kind, a.to_amount, a.owed) == ("raise", 1550, 0)


def test_tda46_situation2_prior_chips_withdrawn_overchip_is_a_call():
    """Situation 2-1: both 25s withdrawn, one 1,000 added: a call."""
    h = bb_with_two_25s_facing_600()
    a = last(h.push(2, [1000], withdrawn=[25, 25]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 600, 400)


def test_tda46_situation2_prior_chips_withdrawn_several_new_chips_rule_45():
    """Situation 2-2: both 25s withdrawn, 1,000 + 500 added: rule 45 on the new chips: a raise to 1,500."""
    h = bb_with_two_25s_facing_600()
    a = last(h.push(2, [1000, 500], withdrawn=[25, 25]))
    assert (a.kind, a.to_amount) == ("raise", 1500)


def test_tda46_situation3_partial_withdrawal_is_rule_45_on_all_chips():
    """Situation 3: one 25 withdrawn, the other left, 500 + 100 added (625): 50% of 550 not reached: a call."""
    h = bb_with_two_25s_facing_600()
    a = last(h.push(2, [500, 100], withdrawn=[25]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 600, 25)
    assert "TDA 46-3-2" in a.rules


def test_tda46_situation3_partial_withdrawal_fifty_percent_reached():
    """Situation 3: one 25 withdrawn, 1,000 added (1,025 in all): 425 over the call ≥ 275: raise to the 1,150."""
    h = bb_with_two_25s_facing_600()
    a = last(h.push(2, [1000], withdrawn=[25]))
    assert (a.kind, a.to_amount, a.owed) == ("raise", 1150, 125)


def test_tda46_situation4_prior_chip_covers_the_call():
    """Situation 4: 50-100, the big blind posted a 1,000 chip; raise to 700; adding a 500 is rule 45 on all chips:
    1,500 — a raise to 1,500 (reached by 50%); with the 1,000 withdrawn the same."""
    for withdrawn in ([], [1000]):
        h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(50, 100), button=3, forced_bet_chips={2: [1000]})
        to(h, 3, 700)
        h.fold(1)
        chips = [500] if not withdrawn else [1000, 500]
        a = last(h.push(2, chips, withdrawn=withdrawn))
        assert (a.kind, a.to_amount) == ("raise", 1500), withdrawn


def test_tda46_situation4_call_declared_uses_the_chip_already_there():
    """Situation 4: the 1,000 chip covers 700: "call" with no new chips; 300 change goes back."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(50, 100), button=3, forced_bet_chips={2: [1000]})
    to(h, 3, 700)
    h.fold(1)
    a = last(h.declare(2, "call"))
    assert (a.kind, a.to_amount, a.returned, a.owed) == ("call", 700, 300, 0)


def test_tda46_situation5_all_chips_pushed_is_all_in():
    """Situation 5: pushing every chip forward reads as all chips bet (rule 45): all-in."""
    h = hand({1: BIG, 2: 3000, 3: BIG}, blinds=(25, 50), button=3, forced_bet_chips={2: [25, 25]})
    to(h, 3, 600)
    h.fold(1)
    a = last(h.push(2, [1000, 1000, 500, 100, 100, 100, 50, 50, 25, 25]))  # everything behind: 2,950
    assert a.kind == "all_in" and a.to_amount == 3000


def test_tda46_2_withdrawn_chip_obliges_call_or_raise():
    """TDA 46-2: a player facing a raise who clearly withdraws a chip must call or raise; a fold is flagged."""
    h = bb_with_two_25s_facing_600()
    r = h.push(2, [], withdrawn=[25])
    assert r.ok and r.code == "chips_withdrawn" and "TDA 46-2" in r.rules
    r = h.fold(2)
    assert r.ok and "TDA 46-2" in r.actions[0].rules


def test_tda46_2_withdrawn_then_chips_is_read_as_a_partial_withdrawal():
    """TDA 46-2 then 46-3 situation 3: one 25 taken back, then 500 + 100 added: rule 45 on all chips: a call."""
    h = bb_with_two_25s_facing_600()
    h.push(2, [], withdrawn=[25])
    a = last(h.push(2, [500, 100]))
    assert (a.kind, a.to_amount) == ("call", 600) and "TDA 46-3-2" in a.rules


# ---- TDA 47: reopening ----------------------------------------------------------------------------------


def tda47_example1():
    """50-100 flop: A bets 100, B all-in 125, C calls 125, D all-in 200, E calls 200."""
    stacks = {1: BIG, 2: 100 + 125, 3: BIG, 4: 100 + 200, 5: BIG}
    h = hand(stacks, button=5)
    limp_to_flop(h)
    to(h, 1, 100)
    assert last(h.declare(2, "all_in")).to_amount == 125
    call(h, 3)
    assert last(h.declare(4, "all_in")).to_amount == 200
    call(h, 5)
    return h


def test_tda47_example1_short_all_ins_add_up_to_a_full_raise():
    """Example 1: A faces 100 more, a full raise made of two short all-ins: A may fold, call or raise."""
    h = tda47_example1()
    assert h.to_act() == 1 and h.can_raise(1) and h.min_raise_to() == 300


def test_tda47_example1a_caller_of_the_first_all_in_is_not_reopened():
    """Example 1-A: A calls 200; C faces only 75 more: call or fold, no raise."""
    h = tda47_example1()
    call(h, 1)
    assert h.to_act() == 3 and h.to_call(3) == 75 and not h.can_raise(3)
    assert "TDA 47" in h.legal(3).reason


def test_tda47_example1b_full_raise_reopens():
    """Example 1-B: A raises the minimum to 300; C faces 175, more than a full raise: reopened."""
    h = tda47_example1()
    to(h, 1, 300)
    assert h.to_act() == 3 and h.to_call(3) == 175 and h.can_raise(3)


def test_tda47_example2_min_raise_stays_the_last_full_bet():
    """Example 2: A bets 300, B all-in 500, C all-in 650, D all-in 800, E calls: F calls 800 or raises to 1,100."""
    stacks = {1: BIG, 2: 100 + 500, 3: 100 + 650, 4: 100 + 800, 5: BIG, 6: BIG}
    h = hand(stacks, button=6)
    limp_to_flop(h)
    to(h, 1, 300)
    for seat in (2, 3, 4):
        h.declare(seat, "all_in")
    call(h, 5)
    assert h.to_act() == 6 and h.to_call(6) == 800 and h.min_raise_to() == 1100


def tda47_example3():
    """2,000-4,000 pre-flop: A calls 4,000, B folds, C all-in for 7,500, folds to the small blind, who folds."""
    stacks = {1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: 7500, 6: BIG}
    h = hand(stacks, blinds=(2000, 4000), button=6)
    call(h, 3)  # A
    h.fold(4)  # B
    assert last(h.declare(5, "all_in")).to_amount == 7500  # C
    h.fold(6)
    h.fold(1)  # small blind
    return h


def test_tda47_example3a_big_blind_has_its_option_a_caller_does_not():
    """3-A: the big blind may raise (to 11,500); it calls; A faces 3,500 — not a full raise: no raise."""
    h = tda47_example3()
    assert h.to_act() == 2 and h.min_raise_to() == 11500
    call(h, 2)
    assert h.to_act() == 3 and h.to_call(3) == 3500 and not h.can_raise(3)


def test_tda47_example3b_big_blind_raise_reopens_for_the_caller():
    """3-B: the big blind raises to 11,500; A faces 7,500 more, over a full raise: reopened."""
    h = tda47_example3()
    to(h, 2, 11500)
    assert h.to_act() == 3 and h.can_raise(3)


def test_tda47_2_limit_half_a_bet_reopens():
    """TDA 47-2 (PP Betting 5): limit: an all-in of half a bet or more counts as a bet and reopens."""
    h = hand({1: BIG, 2: BIG, 3: 20 + 26}, blinds=(10, 20), button=3, variant=FLHE)  # turn/river big bet 40
    limp_to_flop(h)
    to(h, 1, 20)
    call(h, 2)
    a = last(h.declare(3, "all_in"))
    assert a.to_amount == 26 and not a.full  # 6 over 20: less than half a small bet
    call(h, 1)
    assert not h.can_raise(2)
    h2 = hand({1: BIG, 2: BIG, 3: 20 + 32}, blinds=(10, 20), button=3, variant=FLHE)
    limp_to_flop(h2)
    to(h2, 1, 20)
    call(h2, 2)
    a = last(h2.declare(3, "all_in"))
    assert a.to_amount == 32 and a.full  # 12 over 20: half a bet or more
    assert h2.can_raise(1) and h2.min_raise_to() == 52


# ---- TDA 51: incomplete calls ---------------------------------------------------------------------------


def flop_1000_2000(players=4, **kw):
    h = hand({s: BIG for s in range(1, players + 1)}, blinds=(1000, 2000), button=players, **kw)
    limp_to_flop(h)
    return h


def test_tda51_example1_incomplete_call_after_a_raise_floor_decides():
    """Example 1: A opens 2,000, B raises to 8,000, C silently 2,000: the floor decides (complete or fold)."""
    h = flop_1000_2000()
    to(h, 1, 2000)
    to(h, 2, 8000)
    r = h.push(3, [1000, 1000])
    assert r.ok and r.needs_floor and "TDA 51" in r.rules
    assert h.to_act() == 3
    a = last(h.resolve_incomplete_call(3, complete=True))
    assert (a.kind, a.to_amount, a.owed) == ("call", 8000, 6000)


def test_tda51_example2_incomplete_call_against_the_opening_bet_is_a_call():
    """Example 2: four players, A opens 8,000, B silently 2,000: B must call 8,000."""
    h = flop_1000_2000()
    to(h, 1, 8000)
    a = last(h.push(2, [1000, 1000]))
    assert (a.kind, a.to_amount, a.owed) == ("call", 8000, 6000)


def test_tda51_heads_up_incomplete_call_is_a_call():
    """TDA 51-B-1: heads-up any incomplete call is a full call."""
    h2 = flop_1000_2000(players=2)  # heads-up after the flop the big blind (seat 1) acts first
    to(h2, 1, 2000)
    to(h2, 2, 8000)
    a = last(h2.push(1, [1000]))
    assert (a.kind, a.to_amount, a.owed) == ("call", 8000, 5000)


def test_tda51_example3_call_declared_binds_the_full_amount():
    """Example 3: A opens 2,000, B raises to 8,000, C says "call": C owes 8,000."""
    h = flop_1000_2000()
    to(h, 1, 2000)
    to(h, 2, 8000)
    a = last(h.declare(3, "call"))
    assert (a.kind, a.to_amount, a.owed) == ("call", 8000, 8000)


def test_tda51_example4_floor_lets_him_fold_keeping_the_opening_bet():
    """Example 4: 200-400, first player 400, A raises to 1,200, B silently 500, told 1,200, folds: loses 400,
    100 back."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG}, blinds=(200, 400), button=5)
    call(h, 3)
    to(h, 4, 1200)
    r = h.push(5, [500])
    assert r.needs_floor
    a = last(h.resolve_incomplete_call(5, complete=False))
    assert (a.kind, a.to_amount, a.returned) == ("fold", 400, 100)


def test_ca_actions2_incomplete_call_complete_or_forfeit():
    """CA Actions 2: the player completes (no raise) or forfeits everything put in."""
    h = flop_1000_2000(rules=CASINOS_AUSTRIA)
    to(h, 1, 8000)
    r = h.push(2, [1000, 1000])
    assert r.code == "incomplete_call" and "CA Actions 2" in r.rules  # even against the opening bet: the player's
    assert not r.needs_floor  # choice, not the floor's
    a = last(h.resolve_incomplete_call(2, complete=False))
    assert (a.kind, a.to_amount, a.returned) == ("fold", 2000, 0)


@pytest.mark.parametrize("rules", [POKER_PLAY, ALLIN_CLUB])
def test_pp16_ac40_incomplete_call_must_be_completed(rules):
    """PP Betting 16, AC 40: an improper amount is brought up to the proper size — even after a raise."""
    h = flop_1000_2000(rules=rules)
    to(h, 1, 2000)
    to(h, 2, 8000)
    a = last(h.push(3, [1000, 1000]))
    assert (a.kind, a.to_amount, a.owed) == ("call", 8000, 6000)


# ---- TDA 52: under-minimum and over-pot bets ------------------------------------------------------------


def test_tda52_1_under_minimum_raise_corrected():
    """100-200 flop: A bets 600, B raises to 1,000 (200 short): corrected to 1,200 for everyone."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG}, blinds=(100, 200), button=5)
    limp_to_flop(h)
    to(h, 1, 600)
    a = last(h.declare(2, "raise", 1000))
    assert (a.to_amount, a.owed) == (1200, 1200) and "TDA 52" in a.rules
    assert h.to_call(3) == 1200


def test_tda52_1_under_minimum_raise_in_chips_corrected():
    """The same raise made silently with 1,000 in chips: at least half a raise, so the full raise is owed."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG}, blinds=(100, 200), button=5)
    limp_to_flop(h)
    to(h, 1, 600)
    a = last(h.push(2, [500, 100, 100, 100, 100, 100]))
    assert (a.to_amount, a.owed) == (1200, 200)


def test_tda52_1_under_minimum_bet_corrected():
    """An opening bet under the big blind is corrected to the minimum bet."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    a = last(h.push(1, [100]))
    assert (a.kind, a.to_amount, a.owed) == ("bet", 200, 100)


def plo_flop_pot_10500():
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(500, 1000), button=4, variant=PLO)
    to(h, 3, 2625)
    call(h, 4)
    call(h, 1)
    call(h, 2)
    assert h.end_street().ok and h.pot_total() == 10500
    return h


def test_tda52_2_example1_under_pot_bet_stands():
    """Example 1: pot 10,500, A bets 9,500 (told the wrong pot), action follows: the 9,500 stands."""
    h = plo_flop_pot_10500()
    a = last(h.push(1, [5000, 1000, 1000, 1000, 1000, 500]))
    assert (a.kind, a.to_amount) == ("bet", 9500)


def test_tda52_2_example2_pot_declared_is_the_real_pot():
    """Example 2: A asked for the pot and bets "pot": the bet is 10,500; chips for 9,500 leave 1,000 owed."""
    h = plo_flop_pot_10500()
    h.declare(1, "pot")
    r = h.push(1, [5000, 1000, 1000, 1000, 1000, 500])
    assert r.ok and h.bets[1] == 10500 and h.seat_state(1)["owed"] == 1000


def test_tda52_2_example3_over_pot_bet_reduced():
    """Example 3: pot 10,500, A bets 11,500: reduced to 10,500."""
    h = plo_flop_pot_10500()
    a = last(h.declare(1, "bet", 11500))
    assert a.to_amount == 10500 and "TDA 52-2" in a.rules


def test_tda54_2_short_big_blind_counts_in_full_for_pot_limit():
    """TDA 54-2: SB 100, BB all-in for 100 (short by 100): the first player's pot-limit bet is 700."""
    h = BettingHand(PLO, [1, 2, 3, 4], 4, {1: BIG, 2: 100, 3: BIG, 4: BIG}, (100, 200))
    assert h.to_act() == 3 and h.to_call(3) == 200 and h.max_bet_to() == 700


# ---- TDA 53: out of turn --------------------------------------------------------------------------------


def tda53_flop(infer_checks=True):
    """THE 50-100 flop, seats 3–6 (button 6): seat 3 bets 300, seat 4 folds, seat 5 is to act."""
    h = hand({3: BIG, 4: BIG, 5: BIG, 6: BIG}, button=6, infer_checks=infer_checks)
    limp_to_flop(h)
    to(h, 3, 300)
    h.fold(4)
    return h


def test_tda53_example1_unchanged_action_makes_the_oot_raise_binding():
    """Example 1, step 2: seat 6 says "raise to 800" out of turn; seat 5 calls: seat 6's raise to 800 binds."""
    h = tda53_flop()
    r = h.declare(6, "raise", 800)
    assert r.code == "held_out_of_turn" and "TDA 53" in r.rules
    r = h.declare(5, "call")
    raised = [a for a in r.actions if a.seat == 6]
    assert raised and raised[0].kind == "raise" and raised[0].to_amount == 800 and "TDA 53" in raised[0].rules


def test_tda53_example1_changed_action_returns_the_oot_bet():
    """Example 1, step 2: seat 5 raises to 600 instead: seat 6's raise is not binding; all options open."""
    h = tda53_flop()
    h.push(6, [500, 100, 100, 100])  # seat 6 pushed 800 in chips out of turn
    r = h.declare(5, "raise", 600)
    assert h.to_act() == 6 and h.seat_state(6)["change"] == 800 and "TDA 53" in r.rules
    assert h.can_raise(6) and h.to_call(6) == 600


def test_tda53_example2_oot_check_binding_if_unchanged():
    """Example 2: seats 3 and 4 check, seat 5 to act, seat 6 says "check": seat 5 checks: seat 6's check binds."""
    h = hand({3: BIG, 4: BIG, 5: BIG, 6: BIG}, button=6)
    limp_to_flop(h)
    h.check(3)
    h.check(4)
    assert h.declare(6, "check").code == "held_out_of_turn"
    r = h.check(5)
    assert [a.kind for a in r.actions] == ["check", "check"] and h.round_complete()


def test_tda53_example2_oot_check_void_if_seat_5_bets():
    """Example 2: seat 5 bets 300 instead: seat 6 has all options (call 300, raise, fold)."""
    h = hand({3: BIG, 4: BIG, 5: BIG, 6: BIG}, button=6)
    limp_to_flop(h)
    h.check(3)
    h.check(4)
    h.declare(6, "check")
    to(h, 5, 300)
    assert h.to_act() == 6 and h.to_call(6) == 300 and h.can_raise(6)


def test_tda53_oot_fold_is_binding():
    """TDA 53-1 (CA Actions 2; AC 34): a fold out of turn is binding at once."""
    h = tda53_flop()
    r = h.fold(6)
    assert r.ok and h.seat_state(6)["folded"] and h.to_act() == 5


def test_tda53_2_example1_skipped_seat_after_substantial_action():
    """53-2 example 1: UTG (3) bets 600, seat 4 skipped: seat 5 calls out of turn, seat 6 folds: substantial action
    (two players with chips): the out-of-turn actions stand, the floor decides seat 4's hand."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG, 6: BIG}, blinds=(100, 200), button=6)
    to(h, 3, 600)
    r = h.push(5, [500, 100])
    assert r.code == "held_out_of_turn"
    r = h.fold(6)
    assert r.needs_floor and "TDA 53-2" in r.rules


def test_tda53_2_example2_skipped_seat_on_the_turn():
    """53-2 example 2: turn, UTG (3) bets 600, seat 4 skipped "als Platz 5 checkt und Platz 6 600 OOT bezahlt":
    two actions out of turn after seat 4, one with chips: floor decides."""
    h = hand({3: BIG, 4: BIG, 5: BIG, 6: BIG}, blinds=(100, 200), button=6)
    limp_to_flop(h)
    limp_to_flop(h)  # flop checked through
    to(h, 3, 600)
    h.declare(5, "check")  # out of turn, skipping seat 4
    r = h.push(6, [500, 100])
    assert r.needs_floor and "TDA 53-2" in r.rules


def test_pp10_oot_declaration_dismissed_without_penalty():
    """PP Betting 10: "A verbal declaration that is out of turn will be dismissed and no penalties will be infringed
    on the player responsible": that player may still raise on the next turn."""
    h = hand({3: BIG, 4: BIG, 5: BIG, 6: BIG}, button=6, rules=POKER_PLAY)
    limp_to_flop(h)
    to(h, 3, 300)
    h.fold(4)
    r = h.declare(6, "raise", 800)
    assert r.code == "dismissed"
    call(h, 5)
    assert h.to_act() == 6 and h.can_raise(6)


def test_ac34_oot_bet_returned_when_the_action_changes():
    """AC 34: an out-of-turn bet is binding only if the action does not change; otherwise it is returned."""
    h = hand({3: BIG, 4: BIG, 5: BIG, 6: BIG}, button=6, rules=ALLIN_CLUB)
    limp_to_flop(h)
    to(h, 3, 300)
    h.fold(4)
    h.declare(6, "raise", 800)
    to(h, 5, 600)
    assert h.to_act() == 6 and h.bets[6] == 0


def test_string_bet_second_motion_is_not_part_of_the_bet():
    """CA Actions 2-3, PP Betting 14, AC 42: chips from a second motion go back."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3)
    limp_to_flop(h)
    assert last(h.push(1, [500])).to_amount == 500
    r = h.push(1, [500])
    assert r.code == "string_bet" and h.bets[1] == 500 and h.seat_state(1)["change"] == 500


# ---- Casinos Austria ACTIONS chip examples ----------------------------------------------------------------


def test_ca_actions4_two_500s_preflop_300_600_is_a_call():
    """CA Actions 4: 300-600 pre-flop, two 500 chips unannounced: only a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(300, 600), button=4, rules=CASINOS_AUSTRIA)
    a = last(h.push(3, [500, 500]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 600, 400)


def test_ca_actions4_example_two_1000s_against_1200_is_a_call():
    """CA Actions 4, 200/400: A raises to 1,200, B puts two 1,000s without announcing: a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(200, 400), button=4, rules=CASINOS_AUSTRIA)
    to(h, 3, 1200)
    assert last(h.push(4, [1000, 1000])).kind == "call"


def test_ca_actions4_example_four_500s_against_1200_raise_to_2000():
    """CA Actions 4: four 500s instead: a raise to 2,000 (another 800)."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(200, 400), button=4, rules=CASINOS_AUSTRIA)
    to(h, 3, 1200)
    a = last(h.push(4, [500, 500, 500, 500]))
    assert (a.kind, a.to_amount) == ("raise", 2000)


def test_ca_actions4_example_four_1000s_after_3200_is_a_call():
    """CA Actions 4: after 800 / 1,600 / 2,400 / 3,200, four 1,000s unannounced is a call of 3,200."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG, 5: BIG, 6: BIG}, blinds=(400, 800), button=6, rules=CASINOS_AUSTRIA)
    to(h, 3, 1600)
    to(h, 4, 2400)
    to(h, 5, 3200)
    a = last(h.push(6, [1000, 1000, 1000, 1000]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 3200, 800)


def test_ca_actions4_overchip_after_flop_bets_full_value():
    """CA Actions 4: after the flop a bet with a higher chip without announcement is the chip's full value."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3, rules=CASINOS_AUSTRIA)
    limp_to_flop(h)
    assert last(h.push(1, [5000])).to_amount == 5000


def test_ca_actions5_fifty_percent_rule():
    """CA Actions 5: 50% or more of the previous raise unannounced must be completed; less is a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(100, 200), button=4, rules=CASINOS_AUSTRIA)
    to(h, 3, 600)  # raise of 400
    a = last(h.push(4, [500, 100, 100, 100]))  # 800: 200 over = 50%
    assert (a.kind, a.to_amount, a.owed) == ("raise", 1000, 200)


# ---- ALLIN club (AC 34–43) ----------------------------------------------------------------------------------


def test_ac36_example_min_reraise():
    """AC 36: flop bet 200, raise to 500 (minimum 400); the minimum re-raise is 800."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3, rules=ALLIN_CLUB)
    limp_to_flop(h)
    to(h, 1, 200)
    to(h, 2, 500)
    assert h.min_raise_to() == 800


def test_ac38_example_two_1000s_against_1200_is_a_call():
    """AC 38: blinds 200/400, A raises to 1,200, B throws two 1,000s without announcing a raise: a call."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(200, 400), button=4, rules=ALLIN_CLUB)
    to(h, 3, 1200)
    a = last(h.push(4, [1000, 1000]))
    assert (a.kind, a.to_amount, a.returned) == ("call", 1200, 800)


def test_ac37_raise_declared_with_a_large_chip_is_the_most_it_allows():
    """AC 37: "raise" announced, a higher chip without amount: the highest raise up to the chip's value."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(200, 400), button=4, rules=ALLIN_CLUB)
    to(h, 3, 1200)
    h.declare(4, "raise")
    assert last(h.push(4, [5000])).to_amount == 5000


def test_ac43_unclear_amount_lowest():
    """AC 43: at 100/200 "bet five" with a 5,000 chip: unclear, the lowest reading: 500."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(100, 200), button=3, rules=ALLIN_CLUB)
    limp_to_flop(h)
    a = last(h.declare(1, "bet", (500, 5000)))
    assert a.to_amount == 500 and "AC 43" in a.rules[0]


@pytest.mark.parametrize("pot_calls, expected", [(0, 500), (10, 5000)])
def test_tda54_unclear_amount_highest_reasonable_within_pot(pot_calls, expected):
    """TDA 54: 200-400, "I bet five": 500 with less than 5,000 in the pot, 5,000 with 5,000 or more."""
    stacks = {s: BIG for s in range(1, 12 + 1)} if pot_calls else {1: BIG, 2: BIG, 3: BIG}
    h = BettingHand(NLHE, sorted(stacks)[:10] if pot_calls else sorted(stacks), 10 if pot_calls else 3,
                    stacks, (200, 400), ante=100 if pot_calls else 0)
    limp_to_flop(h)
    assert (h.pot_total() >= 5000) == bool(pot_calls)
    first = h.to_act()
    a = last(h.declare(first, "bet", (500, 5000)))
    assert a.to_amount == expected


# ---- profile differences: one test per profile ----------------------------------------------------------


@pytest.mark.parametrize("profile_name, expected", [
    ("tda", ("call", 1100)),  # TDA 45: removing the 500 leaves 1,000 < 1,100: a call
    ("club_tournament_de", ("call", 1100)),  # DE silent: TDA 45
    ("casinos_austria", ("raise", 1800)),  # CA Actions 4 applies to chips of one value; mixed: 50% rule
    ("allin_club", ("raise", 1800)),  # AC 38 same value only; mixed chips go by AC 36 (50%)
    ("poker_play", ("raise", 1800)),  # PP Betting 14: full bet plus half a bet or more is a raise
])
def test_profiles_mixed_chips_500_and_1000_against_1100(profile_name, expected):
    """A 400, B raises to 1,100, C silently 500 + 1,000: 400 over the call ≥ half of the 700 raise."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(100, 200), button=4, rules=PROFILES[profile_name])
    limp_to_flop(h)
    to(h, 1, 400)
    to(h, 2, 1100)
    a = last(h.push(3, [500, 1000]))
    assert (a.kind, a.to_amount) == expected


@pytest.mark.parametrize("profile_name, expected", [
    ("tda", "call"), ("casinos_austria", "call"), ("allin_club", "call"), ("club_tournament_de", "call"),
    ("poker_play", "raise"),  # no multiple-chip rule: 800 over 1,200 is a full raise
])
def test_profiles_two_1000s_against_1200(profile_name, expected):
    """200/400, raise to 1,200, two 1,000 chips silently."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(200, 400), button=4, rules=PROFILES[profile_name])
    to(h, 3, 1200)
    assert last(h.push(4, [1000, 1000])).base == expected


def three_way_split(profile):
    """Seats 1, 2, 5, 8 (button 8), blinds 1-2: seat 5 raises to 333, seat 8 and the big blind call, the small blind
    folds (its 1 chip stays): a pot of 1,000 that seats 2, 5 and 8 split with the same hand (royal flush board)."""
    h = BettingHand(NLHE, [1, 2, 5, 8], 8, {1: 10000, 2: 10000, 5: 10000, 8: 10000}, (1, 2), rules=profile,
                    chip_values=(1, 5))
    to(h, 5, 333)
    call(h, 8)
    h.fold(1)
    call(h, 2)
    assert h.end_street().ok
    for _ in range(3):
        for seat in (2, 5, 8):
            assert h.check(seat).ok
        assert h.end_street().ok
    board = ["As", "Ks", "Qs", "Js", "Ts"]
    holes = {2: ["2c", "3d"], 5: ["4c", "5d"], 8: ["6c", "7d"]}
    return h, award(h, holes, board)


@needs_evaluator
@pytest.mark.parametrize("profile", [TDA, POKER_PLAY, ALLIN_CLUB, CLUB_TOURNAMENT_DE])
def test_odd_chip_first_winner_left_of_the_button(profile):
    """TDA 20-1, PP Ties 5a, AC 15: the odd chip goes to the first winner left of the button (seat 2)."""
    h, result = three_way_split(profile)
    assert result.pots[0].amount == 1000
    assert dict(result.pots[0].shares) == {2: 334, 5: 333, 8: 333}
    assert result.finishing_stacks == {1: 9999, 2: 10001, 5: 10000, 8: 10000}


@needs_evaluator
def test_odd_chip_casinos_austria_closest_to_the_button():
    """CA GR 8: the winner closest to the button in the betting order (seat 8, the button) gets the odd chip."""
    h, result = three_way_split(CASINOS_AUSTRIA)
    assert dict(result.pots[0].shares) == {2: 333, 5: 333, 8: 334}


@needs_evaluator
def test_odd_chip_order_tda_vs_casinos_austria():
    """The order odd units are handed out in, for the same winners."""
    shares, odd = split_pot(1000, [2, 5, 8], 1)
    assert shares == {2: 334, 5: 333, 8: 333} and odd == [2]
    h, _ = three_way_split(TDA)
    assert odd_chip_order(h, [2, 5, 8], TDA) == [2, 5, 8]
    assert odd_chip_order(h, [2, 5, 8], CASINOS_AUSTRIA) == [8, 5, 2]


def test_pp_ties_4_no_player_gets_more_than_one_odd_chip():
    """PP Ties 3-4: 1,002 split three ways by a unit of 1: 334 each; 1,003 four ways by 1: one chip each to three."""
    shares, odd = split_pot(1003, [1, 2, 3, 4], 1)
    assert sorted(shares.values()) == [250, 251, 251, 251] and odd == [1, 2, 3]


def test_split_unit_small_blind_casinos_austria():
    """CA GR 8: a pot is only split down to the small blind: 1,050 with SB 25 between two → 525 each is fine;
    1,075 → 550 / 525 (the odd 25 as one unit)."""
    shares, odd = split_pot(1075, [8, 5], 25)
    assert shares == {8: 550, 5: 525} and odd == [8]


# ---- limit: caps ----------------------------------------------------------------------------------------------


def test_limit_three_raises_cap_multiway():
    """CA Actions 3 / PP Betting 3a: bet and three raises per round in split limit."""
    h = hand({1: BIG, 2: BIG, 3: BIG, 4: BIG}, blinds=(10, 20), button=4, variant=FLHE)
    limp_to_flop(h)
    to(h, 1, 20)
    to(h, 2, 40)
    to(h, 3, 60)
    to(h, 4, 80)
    assert h.to_act() == 1 and not h.can_raise(1) and "capped" in h.legal(1).reason


@pytest.mark.parametrize("rules, uncapped", [(CASINOS_AUSTRIA, True), (POKER_PLAY, True), (TDA, False)])
def test_limit_heads_up_cap_by_profile(rules, uncapped):
    """Two players left before the cap: CA Actions 3 and PP Betting 4 lift it; TDA 48 keeps it until the event is
    heads-up (a multi-way hand that becomes heads-up stays capped)."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(10, 20), button=3, variant=FLHE, rules=rules)
    limp_to_flop(h)
    h.fold(1)
    to(h, 2, 20)
    to(h, 3, 40)
    to(h, 2, 60)
    to(h, 3, 80)
    assert h.can_raise(2) is uncapped


def test_limit_cap_stays_when_heads_up_after_capping():
    """PP Betting 4: once capped, folds leaving two players do not uncap."""
    h = hand({1: BIG, 2: BIG, 3: BIG}, blinds=(10, 20), button=3, variant=FLHE, rules=POKER_PLAY)
    limp_to_flop(h)
    to(h, 1, 20)
    to(h, 2, 40)
    to(h, 3, 60)
    to(h, 1, 80)
    h.fold(2)
    assert h.to_act() == 3 and not h.can_raise(3)
