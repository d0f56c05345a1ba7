"""The stud games' rules, one scenario each, quoting the rule: the bring-in by the door card and its suit, razz's
bring-in, who acts first on a later street, the open pair on fourth street, the odd chip by the cards, the odd chip
to the high half in stud hi-lo. The hands are bet from chips pushed, as the table reads them, and awarded."""

from __future__ import annotations

import pytest

pytest.importorskip("phevaluator")

from controller import stud  # noqa: E402
from controller.betting import RAZZ, STUD, STUD8, BettingHand  # noqa: E402
from controller.rules import POKER_PLAY, TDA  # noqa: E402
from controller.showdown import award, razz_rank  # noqa: E402

CHIPS = (1, 5, 25)


def new_hand(variant, seats=(1, 2, 3), rules=TDA, stack=200):
    """Seats clockwise from the dealer's left; ante 1, bring-in 2, small bet 4, big bet 8."""
    return BettingHand(variant, list(seats), max(seats), {s: stack for s in seats}, (0, 0), ante=1, bets=(4, 8),
                       bring_in=2, rules=rules, chip_values=CHIPS)


def test_the_lowest_door_card_brings_it_in_and_suits_break_a_tie():
    """PP Ties 1: "The order of suits from lowest to highest rank is as follows: Clubs, Diamonds, Hearts, Spades."
    Of two deuces the deuce of clubs brings it in; an ace is high in stud."""
    assert stud.bring_in_seat({1: "2d", 2: "2c", 3: "Ac", 4: "5s"}, "stud") == 2
    assert stud.bring_in_seat({1: "2s", 2: "2h", 3: "3c"}, "stud8") == 2
    hand = new_hand(STUD, seats=(1, 2, 3, 4))
    assert hand.start_street(stud.bring_in_seat({1: "2d", 2: "2c", 3: "Ac", 4: "5s"}, "stud")).ok
    assert hand.to_act() == 2
    assert not hand.fold(2).ok and not hand.check(2).ok  # the bring-in is forced
    brought = hand.push(2, [1, 1])
    assert brought.ok and brought.actions[0].kind == "bring_in" and brought.actions[0].to_amount == 2
    assert hand.to_act() == 3 and hand.to_call(3) == 2
    completed = hand.push(3, [1, 1, 1, 1])  # the small bet: a completion
    assert completed.actions[0].to_amount == 4 and completed.actions[0].full
    assert hand.legal(4).min_to == 8  # the next raise is a small bet more


def test_the_bring_in_may_complete_to_the_small_bet():
    hand = new_hand(STUD)
    hand.start_street(1)
    ruling = hand.push(1, [1, 1, 1, 1])
    assert ruling.actions[0].to_amount == 4 and ruling.actions[0].base == "bet"
    assert hand.to_call(2) == 4


def test_razz_the_highest_door_card_brings_it_in_the_king_of_spades_highest_aces_low():
    """Razz: the highest up card brings it in, aces low; the king of spades is the highest (suits as PP Ties 1)."""
    assert stud.bring_in_seat({1: "Kc", 2: "Ks", 3: "Qs", 4: "Ah"}, "razz") == 2
    assert stud.bring_in_seat({1: "Ac", 2: "2c"}, "razz") == 2  # the ace is the lowest card in razz


def test_the_best_hand_showing_acts_first_on_a_later_street_and_the_first_from_the_dealers_left_on_a_tie():
    """Fourth to seventh street: the best hand showing acts first (TDA 17-1 names it for the showdown: "high-hand
    bei Stud low-hand bei Razz"); pairs count, straights and flushes do not; equal hands: the first clockwise."""
    showing = {1: ["Ah", "Kh"], 2: ["3c", "3d"], 3: ["Qs", "Js"]}
    assert stud.first_to_act(showing, "stud") == 2  # a pair of threes beats ace-king
    assert stud.first_to_act({1: ["Ah", "Kh"], 2: ["As", "Ks"]}, "stud", order=[2, 1]) == 2
    assert stud.first_to_act({1: ["Ah", "Kh"], 2: ["As", "Ks"]}, "stud") == 1
    # razz: the best low showing; a pair is worse than any unpaired cards
    assert stud.first_to_act({1: ["3c", "3d"], 2: ["Kh", "Qh"], 3: ["7h", "2c"]}, "razz") == 3
    assert stud.first_to_act({1: ["3c", "3d"], 2: ["Kh", "Qh"]}, "razz") == 2
    hand = new_hand(STUD)
    hand.start_street(1)
    for seat, chips in ((1, [1, 1]), (2, [1, 1]), (3, [1, 1])):
        assert hand.push(seat, chips).ok
    assert hand.end_street().ok and hand.to_act() is None and hand.awaiting_opener
    assert not hand.push(1, [5]).ok  # fourth street's first to act is not known before its cards
    assert hand.start_street(stud.first_to_act({1: ["9c", "4d"], 2: ["8c", "8d"], 3: ["Ac", "Kd"]}, "stud")).ok
    assert hand.to_act() == 2


def test_an_open_pair_on_fourth_street_allows_the_big_bet_in_stud_where_the_house_allows_it():
    """CA Actions 3c: "If a player opens the betting round in Stud variants in the lower limit although a pair is
    open and a raise by the lower limit occurs, the same player who opened the betting round can raise by the upper
    limit." Stud high only; pokerkit does not offer it, so it is the house's ``open_pair_big_bet``."""
    showing = {1: ["9c", "9d"], 2: ["Kc", "2d"], 3: ["Ac", "Jd"]}
    assert stud.big_bet_allowed_on_fourth(showing, "stud", TDA.open_pair_big_bet)
    assert not stud.big_bet_allowed_on_fourth(showing, "stud8", True)
    assert not stud.big_bet_allowed_on_fourth(showing, "stud", False)
    for open_pair, bet in ((True, 8), (False, 4)):
        hand = new_hand(STUD)
        hand.start_street(1)
        for seat in (1, 2, 3):
            hand.push(seat, [1, 1])
        hand.end_street()
        assert hand.start_street(1, open_pair=open_pair).ok
        ruling = hand.push(1, [5, 1, 1, 1])  # eight in chips
        assert ruling.actions[0].to_amount == bet
        assert ruling.actions[0].returned == 8 - bet
        if open_pair:
            assert hand.legal(2).min_to == 16  # once the big bet is made the raises are big bets
    hand = new_hand(STUD)
    hand.start_street(1)
    hand.push(1, [1, 1])
    assert not hand.start_street(2, open_pair=True).ok  # third street is open already


def _check_down(hand: BettingHand, showing: dict[int, list[str]], game: str) -> None:
    """Seats 1 and 2 check every street from fourth to seventh; the opener from the cards."""
    while hand.status == "betting":
        assert hand.end_street().ok
        if hand.status != "betting":
            break
        street = hand.street_index
        assert hand.start_street(stud.first_to_act({s: c[: street + 1] for s, c in showing.items()}, game)).ok
        while hand.to_act() is not None:
            assert hand.check(hand.to_act()).ok


def _tied_razz_hand(rules):
    hand = new_hand(RAZZ, rules=rules)
    assert hand.start_street(stud.bring_in_seat({1: "3c", 2: "3d", 3: "Kh"}, "razz")).ok
    assert hand.push(3, [1, 1]).ok  # seat 3 brings it in
    assert hand.push(1, [1, 1]).ok and hand.push(2, [1, 1]).ok
    assert hand.fold(3).ok  # out of turn, between the streets: binding
    hole = {1: ["As", "2c", "3c", "4c", "6s", "Kc", "Kd"], 2: ["Ac", "2d", "3d", "4d", "6h", "Qc", "Qd"]}
    _check_down(hand, {s: c[2:6] for s, c in hole.items()}, "razz")
    return award(hand, hole, rules=rules)


def test_razz_the_odd_chip_to_the_highest_card_of_the_five_card_hand_at_the_tda():
    """TDA 20-2: "Stud, Razz und bei zwei oder mehr High oder Low Händen bei Stud/8: der ungerade Chip geht an die
    höchste Karte nach Farbe der gewinnenden 5-Karten-Hand des Spielers." Both play 6-4-3-2-A; the six of spades is
    higher than the six of hearts."""
    result = _tied_razz_hand(TDA)
    pot = result.pots[0]
    assert pot.amount == 9 and set(pot.winners) == {1, 2}
    assert pot.odd_chips == (1,) and pot.shares == {1: 5, 2: 4}
    assert "TDA 20-2" in pot.rules[2]


def test_razz_the_odd_chip_to_the_lowest_card_of_all_at_poker_play():
    """PP Ties 5b: "the lowest card according to suit in low games, will receive the odd chip. All cards are factored
    into this determination - Not just the five cards of the hand." The ace of clubs is the lowest card."""
    pot = _tied_razz_hand(POKER_PLAY).pots[0]
    assert pot.odd_chips == (2,) and pot.shares == {1: 4, 2: 5}
    assert "PP Ties 5b" in pot.rules[2]


def test_stud_the_odd_chip_to_the_highest_card_by_suit():
    """CA GR 8: "In Seven Card Stud, the top hand goes to the player with the highest card (including suit
    priority) in their hand." Both play kings and sevens with a queen; the king of spades is the highest card."""
    hand = new_hand(STUD)
    assert hand.start_street(stud.bring_in_seat({1: "7h", 2: "7d", 3: "2c"}, "stud")).ok
    assert hand.push(3, [1, 1]).ok and hand.push(1, [1, 1]).ok and hand.push(2, [1, 1]).ok
    assert hand.fold(3).ok
    hole = {1: ["Kh", "Kc", "7h", "7c", "Qh", "3c", "2d"], 2: ["Ks", "Kd", "7d", "7s", "Qd", "4c", "2h"]}
    _check_down(hand, {s: c[2:6] for s, c in hole.items()}, "stud")
    pot = award(hand, hole).pots[0]
    assert set(pot.winners) == {1, 2} and pot.odd_chips == (2,) and pot.shares == {1: 4, 2: 5}


def test_stud_hi_lo_the_odd_chip_goes_to_the_high_half():
    """TDA 20-3: "H/L Split: der ungerade Chip im Gesamtpot geht an die High-Seite." PP Ties 5c: "the high hand is
    given the odd chip in a split between the high and the low hands." Seat 1 has three kings, seat 2 a seven low."""
    hand = new_hand(STUD8)
    assert hand.start_street(stud.bring_in_seat({1: "Kh", 2: "3d", 3: "2c"}, "stud8")).ok
    assert hand.push(3, [1, 1]).ok and hand.push(1, [1, 1]).ok and hand.push(2, [1, 1]).ok
    assert hand.fold(3).ok
    hole = {1: ["Ks", "Kc", "Kh", "9c", "Td", "Jh", "Qs"], 2: ["Ac", "2d", "3d", "4d", "7h", "9s", "Jc"]}
    _check_down(hand, {s: c[2:6] for s, c in hole.items()}, "stud8")
    pot = award(hand, hole).pots[0]
    high, low = pot.halves
    assert (high.side, high.winners, high.amount) == ("high", (1,), 5)
    assert (low.side, low.winners, low.amount) == ("low", (2,), 4)
    assert "TDA 20-3" in pot.rules


def test_razz_counts_a_pair_worse_than_any_five_different_cards_and_ignores_straights_and_flushes():
    assert razz_rank(["Qh", "Jd", "6c", "2s", "Ah", "Ad", "2d"]) < razz_rank(["6c", "6d", "6h", "7s", "7d", "5h", "Tc"])
    assert razz_rank(["5h", "4h", "3h", "2h", "Ah"]) < razz_rank(["6c", "4d", "3h", "2s", "Ah"])  # the wheel, suited
    assert razz_rank(["2c", "2d", "5h", "7s", "8d"]) < razz_rank(["3c", "3d", "4h", "5s", "6d"])  # the lower pair


def test_without_a_bet_on_seventh_street_the_best_hand_showing_shows_first():
    """TDA 17-1: with no bet on the last street the player who would act first shows first: "high-hand bei Stud
    low-hand bei Razz"."""
    hand = new_hand(STUD)
    hand.start_street(3)
    hand.push(3, [1, 1])
    hand.push(1, [1, 1])
    hand.push(2, [1, 1])
    hole = {1: ["2c", "3c", "4h", "5h", "7d", "8d", "Tc"], 2: ["Ah", "Ad", "5c", "9h", "Jd", "Qd", "Ks"],
            3: ["6c", "6d", "2h", "As", "Ac", "9s", "Qh"]}
    _check_down(hand, {s: c[2:6] for s, c in hole.items()}, "stud")
    assert hand.openers[4] == 3  # a pair of aces showing
    assert award(hand, hole).showdown_order == (3, 1, 2)


def test_stud_equity_counts_every_card_seen_out_of_the_deck():
    """The overlay's win %: the cards to come are drawn from the deck minus every card seen, a folded hand's up
    cards too. Razz on sixth street: seat 1 holds the wheel; seat 2 ties it only with one of the fives left."""
    from controller.equity import stud_equity

    cards = {1: ["As", "2s", "3s", "4s", "5s", "Kd"], 2: ["Ac", "2c", "3c", "4c", "Kc", "Kh"]}
    alone = stud_equity(cards, "razz")
    assert alone.exact and alone.street == "sixth"
    assert alone.seats[1].tie == pytest.approx(3 / 40) and alone.seats[0].win == pytest.approx(37 / 40)
    folded = stud_equity(cards, "razz", dead=["5d", "9h"])  # a folded hand showed the five of diamonds
    assert folded.seats[1].tie == pytest.approx(2 / 38) and folded.seats[1].win == 0
    with pytest.raises(ValueError, match="5s is given twice"):
        stud_equity(cards, "razz", dead=["5s"])
    hi_lo = stud_equity({1: ["Ks", "Kc", "Kh", "9c", "Td", "Jh", "Qs"], 2: ["Ac", "2d", "3d", "4d", "7h", "9s", "Jc"]},
                        "stud8")
    assert (hi_lo.seats[0].win, hi_lo.seats[1].low_win, hi_lo.no_low) == (1.0, 1.0, 0.0)


def test_the_stud_example_in_docs_betting_runs_and_reads_as_it_says():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "betting.md").read_text(encoding="utf-8")
    [example] = re.findall(r"## Stud games[^\n]*\n.*?```python\n(.*?)```", text, re.S)
    lines = example.splitlines()
    scope: dict = {}
    exec(compile("\n".join(lines[:-1]), "docs/betting.md", "exec"), scope)
    hand = scope["hand"]
    assert scope["first"] == 3 and [a.kind for a in hand.actions if a.street == "third"][3:] == [
        "bring_in", "raise", "call", "fold"]
    assert hand.openers == {0: 3, 1: 1}
    bet = eval(lines[-1].split("#")[0].strip(), scope)
    assert bet == 8


def test_stud_equity_with_the_community_card_of_a_short_deck():
    """Seven or eight players can run the deck short: the seventh card is one card every seat shares."""
    from controller.equity import stud_equity

    cards = {1: ["As", "Ad", "Kc", "Kd", "2h", "3h"], 2: ["Qs", "Qd", "Jc", "Jd", "4h", "5h"]}
    shared = stud_equity(cards, "stud", community=["Qc"])
    assert shared.exact and shared.runouts == 1 and shared.street == "seventh"
    assert (shared.seats[0].win, shared.seats[1].win) == (0.0, 1.0)  # queens full


@pytest.mark.parametrize("rules, odd", [(TDA, 2), (POKER_PLAY, 3)])
def test_stud_hi_lo_tied_lows_the_odd_chip_by_the_low_cards(rules, odd):
    """PP Ties 5c: "the odd chip between tied low hands is awarded as in the manner of a low game of that poker
    form": at Poker-Play the lowest card of all (PP Ties 5b), the ace of clubs; by TDA 20-2 the highest card of the
    winning five-card low, the six of hearts over the six of diamonds."""
    hand = new_hand(STUD8, seats=(1, 2, 3, 4), rules=rules)
    assert hand.start_street(stud.bring_in_seat({1: "Kh", 2: "3d", 3: "3c", 4: "Qs"}, "stud8")).ok
    assert hand.push(3, [1, 1]).ok and hand.fold(4).ok
    assert hand.push(1, [1, 1]).ok and hand.push(2, [1, 1]).ok
    hole = {1: ["Ks", "Kc", "Kh", "9c", "Td", "Jh", "Qd"], 2: ["Ah", "2h", "3d", "4h", "6h", "Tc", "Js"],
            3: ["Ac", "2d", "3c", "4c", "6d", "9h", "8h"]}
    _check_down(hand, {s: c[2:6] for s, c in hole.items()}, "stud8")
    pot = award(hand, hole, rules=rules).pots[0]
    high, low = pot.halves
    assert (high.winners, high.amount, low.amount) == ((1,), 5, 5)
    assert low.odd_chips == (odd,) and low.shares[odd] == 3


def test_on_an_open_pairs_fourth_street_chips_between_the_bets_are_the_small_bet():
    hand = new_hand(STUD)
    hand.start_street(1)
    for seat in (1, 2, 3):
        hand.push(seat, [1, 1])
    hand.end_street()
    hand.start_street(2, open_pair=True)
    assert (hand.legal(2).min_to, hand.legal(2).max_to) == (4, 8)
    ruling = hand.push(2, [5, 1])
    assert (ruling.actions[0].to_amount, ruling.actions[0].returned) == (4, 2)
    assert hand.legal(3).min_to == 8 and hand.legal(3).max_to == 12  # a small raise, or the big bet's raise
