"""A Seven Card Stud hand as the hand histories write it: PokerStars' stud layout, Open Hand History, and PHH read
back by pokerkit (F7S) and by the engine."""

from __future__ import annotations

import pytest

pytest.importorskip("phevaluator")

from controller import phh, stud  # noqa: E402
from controller.betting import STUD, BettingHand  # noqa: E402
from controller.histories import HandRecord  # noqa: E402
from controller.ohh import to_ohh  # noqa: E402
from controller.pokerstars import to_pokerstars  # noqa: E402
from controller.showdown import award  # noqa: E402

# Each seat's cards in the order dealt: two down, four up, the seventh down.
HOLE = {1: ["9h", "2c", "Kd", "Qh", "Jc", "Tc", "8s"], 2: ["Ah", "As", "3c", "3h", "5d", "6d", "4s"],
        3: ["7d", "7s", "2d"]}


def _played() -> tuple[BettingHand, HandRecord]:
    """Seat 3's deuce brings it in, seat 1 completes, seat 2 calls, seat 3 folds; seat 2's open threes bet fourth
    street, seat 1 calls; then checks to seat 1's straight."""
    hand = BettingHand(STUD, [1, 2, 3], 3, {1: 100, 2: 100, 3: 100}, (0, 0), ante=1, bets=(4, 8), bring_in=2)
    assert hand.start_street(stud.bring_in_seat({s: c[2] for s, c in HOLE.items()}, "stud")).ok
    for seat, chips in ((3, [1, 1]), (1, [1, 1, 1, 1]), (2, [1, 1, 1, 1])):
        assert hand.push(seat, chips).ok
    assert hand.fold(3).ok
    while hand.status == "betting":
        assert hand.end_street().ok
        if hand.status != "betting":
            break
        k = hand.street_index
        assert hand.start_street(stud.first_to_act({s: HOLE[s][2:3 + min(k, 3)] for s in hand.live_seats},
                                                   "stud")).ok
        if k == 1:
            assert hand.push(2, [1, 1, 1, 1]).ok and hand.push(1, [1, 1, 1, 1]).ok
        while hand.to_act() is not None:
            assert hand.check(hand.to_act()).ok
    result = award(hand, {s: HOLE[s] for s in (1, 2)})
    record = HandRecord(hand, HOLE, [], list(result.showdown_order), [(p.amount, p.shares) for p in result.pots],
                        "main", "0100000000042")
    return hand, record


def test_pokerstars_writes_the_stud_layout():
    text = to_pokerstars(_played()[1])
    lines = text.splitlines()
    assert lines[0] == "PokerStars Hand #0100000000042:  7 Card Stud Limit (4/8)"
    assert lines[1] == "Table 'main' 10-max"  # no button in stud
    for line in ("seat3: posts the ante 1", "*** 3rd STREET ***", "Dealt to seat3 [7d 7s 2d]",
                 "seat3: brings in for 2", "seat1: completes it to 4", "seat2: calls 4", "*** 4th STREET ***",
                 "Dealt to seat2 [Ah As 3c] [3h]", "seat2: bets 4", "*** 6th STREET ***", "*** RIVER ***",
                 "Dealt to seat1 [9h 2c Kd Qh Jc Tc] [8s]", "seat2: shows [Ah As 3c 3h 5d 6d 4s] (two pair, Aces and "
                 "Threes)", "seat1 collected 21 from pot", "Total pot 21 | Rake 0",
                 "Seat 3: seat3 folded on the 3rd Street"):
        assert line in lines, line
    assert lines.index("*** SHOW DOWN ***") + 1 == lines.index(
        "seat2: shows [Ah As 3c 3h 5d 6d 4s] (two pair, Aces and Threes)")  # no bet on seventh: the opener shows


def test_open_hand_history_has_stud_rounds_and_the_bring_in():
    ohh = to_ohh(_played()[1])["ohh"]
    assert ohh["game_type"] == "Stud" and ohh["bring_in_amount"] == 2 and "small_blind_amount" not in ohh
    streets = [r["street"] for r in ohh["rounds"]]
    assert streets == ["Third Street", "Fourth Street", "Fifth Street", "Sixth Street", "Seventh Street", "Showdown"]
    third = [(a["player_id"], a["action"], a.get("amount")) for a in ohh["rounds"][0]["actions"]
             if a["action"] not in ("Post Ante", "Dealt Cards")]
    assert third == [(2, "Post Bring In", 2), (0, "Bet", 4), (1, "Call", 4), (2, "Fold", None)]


def test_phh_reads_back_the_same_in_pokerkit_and_in_the_engine():
    pokerkit = pytest.importorskip("pokerkit")
    hand, record = _played()
    result = award(hand, {s: HOLE[s] for s in (1, 2)})
    text = phh.dumps(phh.to_phh(hand, HOLE, (), list(record.shown), result.finishing_stacks))
    assert 'variant = "F7S"' in text and '"p3 pb",' in text and '"d dh p2 3h",' in text
    states = list(pokerkit.HandHistory.loads(text))
    assert list(states[-1].stacks) == [112, 91, 97]
    again, hole, _board, _shown = phh.replay(phh.loads(text))
    assert dict(award(again, hole).finishing_stacks) == {1: 112, 2: 91, 3: 97}

