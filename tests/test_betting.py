"""The betting engine's basics: forced bets, turn order, streets, pots, showdown, PHH and refusals."""

from __future__ import annotations

import importlib.util

import pytest

from controller import phh
from controller.betting import FLHE, NLHE, PLO, PLO5, BettingHand, Straddle
from controller.pots import build_pots, uncalled_bet
from controller.rules import CASINOS_AUSTRIA, POKER_PLAY, PROFILES, TDA, profile, resolve_unclear_amount
from controller.showdown import award, hand_rank, showdown_order

BIG = 100_000

# Hand evaluation needs phevaluator (a runtime dependency of controller.showdown); skip, loudly, where it is missing.
needs_evaluator = pytest.mark.skipif(
    importlib.util.find_spec("phevaluator") is None,
    reason="phevaluator is not installed: add phevaluator>=0.5.3.1 to the dependencies",
)


def make(stacks, button, blinds=(5, 10), variant=NLHE, **kw):
    return BettingHand(variant, sorted(stacks), button, stacks, blinds, **kw)


def to(h, seat, amount):
    before = h.bets[seat]
    r = h.declare(seat, "bet" if h.current_bet == 0 else "raise", amount)
    assert r.ok, r
    if h.seat_state(seat)["owed"]:
        assert h.push(seat, [amount - before]).ok
    return r


def call(h, seat):
    r = h.declare(seat, "call")
    assert r.ok, r
    if h.seat_state(seat)["owed"]:
        assert h.push(seat, [h.seat_state(seat)["owed"]]).ok
    return r


def check_down(h):
    """Check every seat to act, then collect."""
    while h.to_act() is not None:
        assert h.check(h.to_act()).ok
    return h.end_street()


# ---- forced bets and order --------------------------------------------------------------------------------


def test_blinds_posted_left_of_the_button_and_utg_acts_first():
    h = make({1: 1000, 3: 1000, 6: 1000, 8: 1000}, button=6)
    assert h.order == [8, 1, 3, 6]
    assert [(a.seat, a.kind, a.to_amount) for a in h.actions] == [(8, "post_sb", 5), (1, "post_bb", 10)]
    assert h.to_act() == 3 and h.to_call(3) == 10 and h.min_raise_to() == 20


def test_dead_button_on_an_empty_seat():
    h = make({1: 1000, 3: 1000, 6: 1000}, button=4)
    assert h.order == [6, 1, 3] and h.sb_seat == 6 and h.bb_seat == 1 and h.to_act() == 3


def test_heads_up_button_posts_small_blind_acts_first_preflop_last_after():
    """DE 13; AC 29."""
    h = make({2: 1000, 7: 1000}, button=7)
    assert h.sb_seat == 7 and h.bb_seat == 2
    assert h.to_act() == 7
    call(h, 7)
    assert h.to_act() == 2 and h.can_check(2)
    h.check(2)
    assert h.end_street().ok
    assert h.to_act() == 2  # after the flop the big blind acts first, the button last


def test_big_blind_option_after_limps():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3)
    call(h, 3)
    call(h, 1)
    assert h.to_act() == 2 and h.can_check(2) and h.can_raise(2)


def test_blind_larger_than_stack_is_all_in():
    """DE 9: all-in automatically when the blind is larger than the stack; the others still call the full blind."""
    h = make({1: 1000, 2: 6, 3: 1000}, button=3)
    bb = [a for a in h.actions if a.kind == "post_bb"][0]
    assert bb.all_in and bb.to_amount == 6 and h.is_all_in(2)
    assert h.to_call(3) == 10


def test_antes_before_blinds_and_collected_preflop():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3, ante=1)
    assert [a.kind for a in h.actions] == ["ante", "ante", "ante", "post_sb", "post_bb"]
    assert h.pot_total() == 3 + 15
    call(h, 3)
    call(h, 1)
    h.check(2)
    r = h.end_street()
    assert r.collection.into_pot == {1: 11, 2: 11, 3: 11} and r.collection.pots[0].amount == 33


def test_big_blind_ante_is_dead_money_in_the_main_pot():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3, big_blind_ante=10)
    antes = [a for a in h.actions if a.kind == "ante"]
    assert [(a.seat, a.added) for a in antes] == [(2, 10)]
    call(h, 3)
    h.fold(1)
    h.check(2)
    r = h.end_street()
    assert r.collection.pots[0].amount == 10 + 5 + 10 + 10 and r.collection.into_pot[2] == 20


def test_big_blind_ante_short_stack_blind_first():
    h = make({1: 1000, 2: 14, 3: 1000}, button=3, big_blind_ante=10)
    assert [(a.kind, a.added) for a in h.actions if a.seat == 2] == [("post_bb", 10), ("ante", 4)]


def test_live_straddle_acts_last_and_doubles_the_minimum():
    """CA Actions 1: a live straddle of twice the big blind after the big blind; it has the last option."""
    h = make({1: 1000, 2: 1000, 3: 1000, 4: 1000, 5: 1000}, button=5, straddles=[Straddle(20)])
    assert [(a.seat, a.kind, a.to_amount) for a in h.actions][-1] == (3, "straddle", 20)
    assert h.to_act() == 4 and h.to_call(4) == 20 and h.min_raise_to() == 40
    for seat in (4, 5, 1, 2):
        call(h, seat)
    assert h.to_act() == 3 and h.can_check(3) and h.can_raise(3)


def test_button_straddle_action_starts_left_of_the_button():
    """CA Actions 1: button straddle; the action starts left of the dealer button."""
    h = make({1: 1000, 2: 1000, 3: 1000, 4: 1000}, button=4, straddles=[Straddle(20, "button")])
    assert h.actions[-1].seat == 4 and h.to_act() == 1 and h.to_call(1) == 15


def test_mississippi_straddle_action_starts_left_of_it():
    h = make({1: 1000, 2: 1000, 3: 1000, 4: 1000, 5: 1000, 6: 1000}, button=6,
             straddles=[Straddle(20, "mississippi", seat=5)])
    assert h.to_act() == 6
    call(h, 6)
    assert h.to_act() == 1  # then the blinds and UTG, the straddle last


def test_double_live_straddle():
    h = make({s: 1000 for s in range(1, 7)}, button=6, straddles=[Straddle(20), Straddle(40)])
    assert [a.seat for a in h.actions if a.kind == "straddle"] == [3, 4]
    assert h.to_act() == 5 and h.min_raise_to() == 80


# ---- checks, streets, refusals ----------------------------------------------------------------------------


def test_check_inferred_when_the_next_seat_bets():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3)
    call(h, 3)
    call(h, 1)
    h.check(2)
    h.end_street()
    r = h.push(2, [25])  # seat 1 is first; it faced no bet, so it checked
    assert [(a.seat, a.kind) for a in r.actions] == [(1, "check"), (2, "bet")]
    assert "inferred" in r.actions[0].note


def test_check_not_inferred_without_the_option():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3, infer_checks=False)
    call(h, 3)
    call(h, 1)
    h.check(2)
    h.end_street()
    r = h.push(2, [25])
    assert r.code == "held_out_of_turn" and h.to_act() == 1


def test_check_refused_facing_a_bet_and_state_unchanged():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3)
    before = (h.to_act(), dict(h.bets), dict(h.stacks), len(h.actions))
    r = h.check(3)
    assert not r.ok and r.code == "cannot_check"
    assert (h.to_act(), dict(h.bets), dict(h.stacks), len(h.actions)) == before


@pytest.mark.parametrize("call_args, code", [
    (("push", 9, [25]), "unknown_seat"),
    (("push", 3, [0]), "bad_chips"),
    (("push", 3, [5000]), "more_than_stack"),
    (("declare", 3, "shove"), "bad_declaration"),
    (("push", 3, [25], [5]), "bad_withdrawal"),
    (("end_street",), "round_incomplete"),
])
def test_invalid_inputs_are_rulings_not_exceptions(call_args, code):
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3)
    before = (h.to_act(), dict(h.bets), dict(h.stacks), len(h.actions))
    name, *args = call_args
    r = getattr(h, name)(*args)
    assert not r.ok and r.code == code and r.message
    assert (h.to_act(), dict(h.bets), dict(h.stacks), len(h.actions)) == before


def test_end_street_refused_while_chips_are_owed():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3)
    h.declare(3, "raise", 30)
    call(h, 1)
    call(h, 2)
    r = h.end_street()
    assert not r.ok and r.code == "chips_outstanding" and "seat 3 owes 30" in r.message
    h.push(3, [25, 5])
    assert h.end_street().ok


def test_folded_and_all_in_seats_are_refused():
    h = make({1: 1000, 2: 1000, 3: 50}, button=3)
    h.declare(3, "all_in")
    h.push(3, [25, 25])
    h.fold(1)
    assert h.push(1, [5]).code == "folded"
    assert h.push(3, [5]).code == "all_in"


def test_everyone_folds_to_the_big_blind():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3)
    h.fold(3)
    h.fold(1)
    assert h.to_act() is None
    r = h.end_street()
    assert h.status == "complete" and r.collection.returned == {2: 5}
    result = award(h)
    assert result.finishing_stacks == {1: 995, 2: 1005, 3: 1000}


def test_all_in_runout_has_no_more_betting_rounds():
    h = make({1: 1000, 2: 300, 3: 1000}, button=3)
    h.declare(3, "all_in")
    h.push(3, [1000])
    h.fold(1)
    h.declare(2, "all_in")
    h.push(2, [290])
    assert h.round_complete()
    r = h.end_street()
    assert r.collection.returned == {3: 700}
    for _ in range(3):
        assert h.to_act() is None and h.end_street().ok
    assert h.status == "showdown"


# ---- pots ------------------------------------------------------------------------------------------------


def test_side_pots_from_two_short_all_ins():
    h = make({1: 100, 2: 300, 3: 1000, 4: 1000}, button=4)
    to(h, 3, 1000)
    call(h, 4)
    h.declare(1, "all_in"), h.push(1, [95])
    h.declare(2, "all_in"), h.push(2, [290])
    r = h.end_street()
    pots = [(p.amount, p.eligible) for p in r.collection.pots]
    assert pots == [(400, (1, 2, 3, 4)), (600, (2, 3, 4)), (1400, (3, 4))]
    assert r.collection.into_pot == {1: 100, 2: 300, 3: 1000, 4: 1000} and r.collection.returned == {}


def test_uncalled_bet_returned_to_the_bettor():
    h2 = make({1: 1000, 2: 1000, 3: 400}, button=3)
    to(h2, 3, 60)
    to(h2, 1, 900)
    h2.fold(2)
    call(h2, 3)  # all-in for 400
    r = h2.end_street()
    assert r.collection.returned == {1: 500}
    assert [(p.amount, p.eligible) for p in r.collection.pots] == [(810, (1, 3))]


def test_pots_helpers():
    assert uncalled_bet({1: 100, 2: 300, 3: 100}) == (2, 200)
    assert uncalled_bet({1: 100, 2: 100}) == (None, 0)
    pots = build_pots({1: 50, 2: 200, 3: 200, 4: 120}, live=[1, 2, 3], all_in=[1], order=[1, 2, 3, 4])
    assert [(p.amount, p.eligible) for p in pots] == [(200, (1, 2, 3)), (370, (2, 3))]


# ---- showdown ----------------------------------------------------------------------------------------------


def river_hand():
    h = make({1: 1000, 2: 1000, 3: 1000, 4: 1000}, button=4)
    for seat in (3, 4, 1):
        call(h, seat)
    h.check(2)
    h.end_street()
    return h


def test_showdown_order_last_aggressor_of_the_river():
    """TDA 17; AC 12; CA Actions 9."""
    h = river_hand()
    check_down(h)
    check_down(h)
    h.check(1)
    to(h, 2, 50)
    to(h, 3, 150)
    call(h, 4), call(h, 1), call(h, 2)
    h.end_street()
    assert showdown_order(h) == [3, 4, 1, 2]


def test_showdown_order_no_river_bet_first_left_of_the_button():
    h = river_hand()
    h.check(1)
    to(h, 2, 20)  # a flop bet does not count
    call(h, 3), call(h, 4), call(h, 1)
    h.end_street()
    check_down(h)
    check_down(h)
    assert showdown_order(h) == [1, 2, 3, 4]


def test_showdown_order_all_in_called_on_the_turn():
    """CA Actions 6: the all-in player who was called shows first."""
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3)
    call(h, 3), call(h, 1)
    h.check(2)
    h.end_street()
    check_down(h)
    h.check(1)
    h.declare(2, "all_in"), h.push(2, [990])
    call(h, 3)
    h.fold(1)
    while h.status == "betting":
        h.end_street()
    assert showdown_order(h) == [2, 3]


@needs_evaluator
def test_award_main_and_side_pots_to_different_winners():
    h = make({1: 100, 2: 300, 3: 1000}, button=3)
    to(h, 3, 1000)
    h.declare(1, "all_in"), h.push(1, [95])
    h.declare(2, "all_in"), h.push(2, [290])
    while h.status == "betting":
        h.end_street()
    board = ["2c", "7d", "9h", "Ts", "3c"]
    holes = {1: ["Ac", "Ad"], 2: ["Kc", "Kd"], 3: ["Qc", "Qd"]}
    result = award(h, holes, board)
    assert [(p.amount, p.winners) for p in result.pots] == [(300, (1,)), (400, (2,))]
    assert result.finishing_stacks == {1: 300, 2: 400, 3: 700}


@needs_evaluator
def test_omaha_uses_exactly_two_hole_cards():
    """Four spades on board and one in hand is no flush in Omaha (two hole cards, three board cards)."""
    board = ["2s", "5s", "9s", "Ks", "3d"]
    omaha_no_flush = hand_rank(PLO, ["As", "Ad", "Qc", "Jh"], board)
    holdem_flush = hand_rank(NLHE, ["As", "Ad"], board)
    omaha_flush = hand_rank(PLO, ["As", "Qs", "4c", "4h"], board)
    assert holdem_flush < omaha_no_flush and omaha_flush < omaha_no_flush


@needs_evaluator
def test_five_card_omaha_best_two_of_five():
    board = ["2s", "5s", "9s", "Kh", "3d"]
    assert hand_rank(PLO5, ["As", "Qs", "4c", "4h", "Jd"], board) == hand_rank(PLO, ["As", "Qs", "4c", "4h"], board)


@needs_evaluator
def test_duplicate_card_is_refused():
    with pytest.raises(ValueError):
        hand_rank(NLHE, ["As", "Ad"], ["As", "2c", "3d", "4h", "5s"])


@needs_evaluator
def test_split_pot_odd_chip_and_unit():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3, blinds=(5, 10), chip_values=(5, 25))
    h.fold(3)
    call(h, 1)
    h.check(2)
    while h.status == "betting":
        check_down(h) if h.to_act() else h.end_street()
    result = award(h, {1: ["2c", "3d"], 2: ["2d", "3c"]}, ["As", "Ks", "Qs", "Js", "Ts"])
    assert result.pots[0].shares == {1: 10, 2: 10}


# ---- limit and pot limit ------------------------------------------------------------------------------------


def test_split_limit_bet_sizes():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3, blinds=(5, 10), variant=FLHE)
    assert h.min_raise_to() == h.max_bet_to() == 20
    call(h, 3), call(h, 1)
    h.check(2)
    h.end_street()
    assert h.min_raise_to(1) == 10  # flop: small bet
    check_down(h)
    assert h.min_raise_to(1) == 20  # turn: big bet
    r = h.declare(1, "bet", 50)
    assert r.actions[0].to_amount == 20


def test_pot_limit_maximum_preflop_and_postflop():
    h = make({1: BIG, 2: BIG, 3: BIG, 4: BIG}, button=4, blinds=(50, 100), variant=PLO)
    assert h.max_bet_to() == 350  # call 100, pot 250 → raise by 250
    to(h, 3, 350)
    assert h.max_bet_to() == 350 + 500 + 350  # call 350, pot 850 → +850 → 1200
    r = h.declare(4, "raise", 5000)
    assert r.actions[0].to_amount == 1200 and "TDA 52-2" in r.actions[0].rules


# ---- profiles and helpers -------------------------------------------------------------------------------------


def test_every_profile_cites_every_setting():
    assert set(PROFILES) == {"tda", "casinos_austria", "poker_play", "allin_club", "club_tournament_de"}
    for p in PROFILES.values():
        for name in ("odd_chip", "split_unit", "unclear_amount", "substantial_action", "multiple_chip_rule",
                     "incomplete_call", "limit_raise_cap", "limit_heads_up", "out_of_turn"):
            assert p.cite(name), (p.name, name)
    assert profile("tda") is TDA
    with pytest.raises(KeyError):
        profile("nope")


def test_resolve_unclear_amount():
    assert resolve_unclear_amount([500, 5000], pot=4000, rules=TDA)[0] == 500
    assert resolve_unclear_amount([500, 5000], pot=6000, rules=TDA)[0] == 5000
    assert resolve_unclear_amount([500, 5000], pot=6000, rules=PROFILES["allin_club"])[0] == 500


@pytest.mark.parametrize("rules, after_two_calls", [(TDA, True), (CASINOS_AUSTRIA, True), (POKER_PLAY, True)])
def test_substantial_action(rules, after_two_calls):
    h = make({s: 1000 for s in range(1, 6)}, button=5, rules=rules)
    assert not h.substantial_action()
    call(h, 3)
    assert not h.substantial_action()
    call(h, 4)
    assert h.substantial_action() is after_two_calls


def test_substantial_action_tda_three_actions_without_chips():
    h = make({s: 1000 for s in range(1, 6)}, button=5)
    h.fold(3)
    h.fold(4)
    assert not h.substantial_action()
    h.fold(5)
    assert h.substantial_action()


def test_casinos_austria_no_misdeal_after_the_flop():
    h = make({1: 1000, 2: 1000, 3: 1000}, button=3, rules=CASINOS_AUSTRIA)
    h.fold(3)
    call(h, 1)
    h.check(2)
    h.end_street()
    assert h.substantial_action()


# ---- PHH -------------------------------------------------------------------------------------------------------


def played_hand():
    h = BettingHand(NLHE, [2, 5, 7, 9], 9, {2: 1000, 5: 500, 7: 800, 9: 1200}, (5, 10), ante=1)
    to(h, 7, 30)
    call(h, 9)
    h.fold(2)
    h.declare(5, "all_in"), h.push(5, [489])
    call(h, 7)
    h.fold(9)
    while h.status == "betting":
        h.end_street()
    hole = {2: ["As", "Ad"], 5: ["Kc", "Kd"], 7: ["Qh", "Qs"], 9: ["Jh", "Js"]}
    board = ["2c", "7d", "9h", "Ts", "3c"]
    return h, hole, board


def test_phh_mapping_seats_to_players():
    h, hole, board = played_hand()
    d = phh.to_phh(h, hole, board, shown=[5, 7])
    assert d["seats"] == [2, 5, 7, 9]  # p1 = seat 2 (small blind, left of the button 9), p4 = the button
    assert d["blinds_or_straddles"] == [5, 10, 0, 0] and d["antes"] == [1, 1, 1, 1]
    assert d["actions"][:4] == ["d dh p1 AsAd", "d dh p2 KcKd", "d dh p3 QhQs", "d dh p4 JhJs"]
    assert d["actions"][4:9] == ["p3 cbr 30", "p4 cc", "p1 f", "p2 cbr 499", "p3 cc"]


@needs_evaluator
def test_phh_round_trip_through_the_engine():
    h, hole, board = played_hand()
    result = award(h, hole, board)
    text = phh.dumps(phh.to_phh(h, hole, board, shown=[5, 7], finishing_stacks=result.finishing_stacks))
    h2, hole2, board2, shown = phh.replay(phh.loads(text))
    assert [(a.seat, a.kind, a.to_amount) for a in h2.actions] == [(a.seat, a.kind, a.to_amount) for a in h.actions]
    assert award(h2, hole2, board2).finishing_stacks == result.finishing_stacks and shown == [5, 7]


@needs_evaluator
def test_phh_read_by_pokerkit():
    pokerkit = pytest.importorskip("pokerkit")
    h, hole, board = played_hand()
    result = award(h, hole, board)
    text = phh.dumps(phh.to_phh(h, hole, board, shown=[5, 7]))
    for state in pokerkit.HandHistory.loads(text):
        pass
    assert list(state.stacks) == [result.finishing_stacks[s] for s in h.order]


def test_phh_heads_up_and_big_blind_ante_follow_pokerkit():
    pokerkit = pytest.importorskip("pokerkit")
    h = BettingHand(NLHE, [3, 8], 8, {3: 1000, 8: 700}, (5, 10), big_blind_ante=10)
    to(h, 8, 40)
    call(h, 3)
    h.end_street()
    h.check(3)
    to(h, 8, 100)
    h.fold(3)
    h.end_street()
    result = award(h)
    d = phh.to_phh(h)
    assert d["blinds_or_straddles"] == [5, 10] and d["antes"] == [0, 10]
    for state in pokerkit.HandHistory.loads(phh.dumps(d)):
        pass
    assert list(state.stacks) == [result.finishing_stacks[s] for s in h.order]
    h2, *_ = phh.replay(phh.loads(phh.dumps(d)))
    assert award(h2).finishing_stacks == result.finishing_stacks


def test_phh_refuses_variants_it_cannot_name():
    h = BettingHand(PLO5, [1, 2], 2, {1: 100, 2: 100}, (1, 2))
    with pytest.raises(ValueError):
        phh.to_phh(h)


# ---- robustness ------------------------------------------------------------------------------------------------


def test_random_inputs_never_raise_and_conserve_chips():
    """Any sequence of physical inputs gets a Ruling; chips are neither created nor lost, and the zone ledger holds."""
    import random

    rng = random.Random(7)
    kinds = ["check", "call", "fold", "bet", "raise", "all_in", "pot", "complete", "raise_to", "nonsense"]
    for _ in range(1000):
        n = rng.randint(2, 7)
        seats = sorted(rng.sample(range(1, 10), n))
        stacks = {s: rng.choice([30, 200, 1000, 5000]) for s in seats}
        variant = rng.choice([NLHE, PLO, FLHE])
        h = BettingHand(variant, seats, rng.choice(seats), stacks, (5, 10), ante=rng.choice([0, 1]),
                        rules=rng.choice(list(PROFILES.values())), infer_checks=rng.random() < 0.5)
        total = sum(stacks.values())
        for _ in range(60):
            seat = rng.choice(seats + [99])
            r = rng.random()
            if r < 0.35:
                result = h.push(seat, [rng.choice([1, 5, 25, 100, 500]) for _ in range(rng.randint(0, 4))])
            elif r < 0.55:
                result = h.declare(seat, rng.choice(kinds), rng.choice([None, None, 10, 55, 300, (50, 500)]))
            elif r < 0.65:
                result = h.fold(seat)
            elif r < 0.8:
                result = h.check(seat)
            elif r < 0.85:
                result = h.resolve_incomplete_call(seat, rng.random() < 0.5)
            else:
                result = h.end_street()
            assert result.code and isinstance(result.ok, bool)
            in_middle = sum(p.amount for p in h.pots()) + sum(h.bets.values()) + h._uncollected_antes()
            assert sum(h.stacks.values()) + in_middle == total, (result, h.stacks, h.bets, h.pots())
            assert all(v >= 0 for v in h.stacks.values())
            if h.status != "betting":
                break
            for s in h.order:  # the chips in a zone are always bet - owed + change
                st = h.seat_state(s)
                assert sum(st["zone"]) == st["bet"] - st["owed"] + st["change"], (s, st, result)
            if h.status != "betting":
                break
