"""Hand histories of the cash-game variants: run twice and three times, the double board, bomb pots.

PokerStars text is checked line for line against PokerStars' published run-twice histories (``*** FIRST FLOP ***``
... ``*** SECOND SHOW DOWN ***``, ``Hand was run twice``, ``FIRST Board``; pokerkit's PokerStars parser reads no
run-twice hand), OHH against the spec's schema with its ``Run_It_Twice`` flag; a bomb pot, a hand with antes and no
pre-flop betting, is read back by pokerkit's PokerStars parser's sibling, its PHH reader, elsewhere
(tests/test_bomb_pot.py) and here written in both formats.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from controller.betting import NLHE, PLO, BettingHand
from controller.histories import HandRecord
from controller.ohh import to_ohh
from controller.pokerstars import to_pokerstars
from controller.runouts import board_shares
from controller.showdown import award

pytest.importorskip("phevaluator")
ROOT = Path(__file__).resolve().parents[1]
OHH = Draft202012Validator(json.loads((ROOT / "schemas" / "histories" / "ohh.schema.json").read_text()))


def all_in(hand: BettingHand, seats) -> None:
    for seat in seats:
        assert hand.declare(seat, "all_in").ok
        assert hand.push(seat, [hand.seat_state(seat)["owed"]]).ok


def finish(hand: BettingHand) -> None:
    while hand.status == "betting":
        while hand.to_act() is not None:
            assert hand.check(hand.to_act()).ok
        assert hand.end_street().ok


def record_of(hand, hole, boards, runs=1, double_board=False, run_pots=None):
    result = award(hand, hole, boards=boards, runs=runs, double_board=double_board, run_pots=run_pots)
    shown = list(result.showdown_order)
    record = HandRecord(hand, hole, boards[0], shown, [(p.amount, p.shares) for p in result.pots], "t-1", "42",
                        table_size=6, boards=boards, runs=runs, double_board=double_board,
                        pot_boards=[board_shares(p) for p in result.pots])
    ohh = to_ohh(record)
    ohh["ohh"]["start_date_utc"] = "2026-12-01T09:00:00"
    assert not list(OHH.iter_errors(ohh))
    return result, record, ohh["ohh"]


def between(text: str, first: str, last: str) -> list[str]:
    lines = text.splitlines()
    return lines[lines.index(first): lines.index(last) + 1]


def test_a_hand_run_twice_from_before_the_flop_reads_as_pokerstars_writes_it():
    """Heads-up all-in before the flop, run twice (CA Actions 8): seat 2 (button, small blind) and seat 1 each
    1000. Run 1: seat 1's kings beat the queens; run 2: the queens make a set. 1000 each way."""
    hand = BettingHand(NLHE, [1, 2], 2, {1: 1000, 2: 1000}, (50, 100))
    all_in(hand, [2, 1])
    finish(hand)
    hole = {1: ["Ks", "Kd"], 2: ["Qs", "Qd"]}
    boards = [["2c", "7h", "9d", "3s", "4h"], ["Qh", "7c", "9s", "3d", "4c"]]
    result, record, ohh = record_of(hand, hole, boards, runs=2)
    assert result.payouts == {1: 1000, 2: 1000}
    text = to_pokerstars(record)
    assert between(text, "*** FIRST FLOP *** [2c 7h 9d]", "*** SUMMARY ***") == [
        "*** FIRST FLOP *** [2c 7h 9d]",
        "*** FIRST TURN *** [2c 7h 9d] [3s]",
        "*** FIRST RIVER *** [2c 7h 9d 3s] [4h]",
        "*** SECOND FLOP *** [Qh 7c 9s]",
        "*** SECOND TURN *** [Qh 7c 9s] [3d]",
        "*** SECOND RIVER *** [Qh 7c 9s 3d] [4c]",
        "*** FIRST SHOW DOWN ***",
        "seat2: shows [Qs Qd] (a pair of Queens)",
        "seat1: shows [Ks Kd] (a pair of Kings)",
        "seat1 collected 1000 from pot",
        "*** SECOND SHOW DOWN ***",
        "seat2: shows [Qs Qd] (three of a kind, Queens)",
        "seat1: shows [Ks Kd] (a pair of Kings)",
        "seat2 collected 1000 from pot",
        "*** SUMMARY ***",
    ]
    assert text.splitlines()[-5:] == [
        "Hand was run twice",
        "FIRST Board [2c 7h 9d 3s 4h]",
        "SECOND Board [Qh 7c 9s 3d 4c]",
        "Seat 1: seat1 (big blind) showed [Ks Kd] and won (1000) with a pair of Kings, and lost with a pair of Kings",
        "Seat 2: seat2 (button) (small blind) showed [Qs Qd] and lost with a pair of Queens, and won (1000) with "
        "three of a kind, Queens",
    ]
    assert ohh["flags"] == ["Run_It_Twice"]
    assert [(r["street"], r.get("cards")) for r in ohh["rounds"]] == [
        ("Preflop", None), ("Flop", ["2c", "7h", "9d"]), ("Turn", ["3s"]), ("River", ["4h"]),
        ("Flop", ["Qh", "7c", "9s"]), ("Turn", ["3d"]), ("River", ["4c"]), ("Showdown", None)]
    assert [w["win_amount"] for w in ohh["pots"][0]["player_wins"]] == [1000, 1000]


def test_a_hand_run_three_times_after_the_flop_shares_the_flop():
    """All-in on the flop, run three times: the flop once, then each run's turn and river. A pot of 2 × 1000 + the
    flop bets is 2000 in units of 1: 666 a run, 2 left over for the winners, one each from the worse position."""
    hand = BettingHand(NLHE, [1, 2], 2, {1: 1000, 2: 1000}, (50, 100))
    assert hand.declare(2, "call").ok and hand.push(2, [50]).ok
    assert hand.check(1).ok and hand.end_street().ok
    all_in(hand, [1, 2])
    finish(hand)
    hole = {1: ["Ks", "Kd"], 2: ["Qs", "Qd"]}
    flop = ["2c", "7h", "9d"]
    boards = [flop + ["3s", "4h"], flop + ["Qh", "4c"], flop + ["5s", "6s"]]
    result, record, ohh = record_of(hand, hole, boards, runs=3)
    assert result.payouts == {1: 1333, 2: 667}  # runs 1 and 3 to seat 1 (666 each), run 2 to seat 2; +1 each
    text = to_pokerstars(record)
    lines = text.splitlines()
    assert "*** FLOP *** [2c 7h 9d]" in lines and "*** FIRST FLOP *** [2c 7h 9d]" not in lines
    assert between(text, "*** FIRST TURN *** [2c 7h 9d] [3s]", "*** THIRD RIVER *** [2c 7h 9d 5s] [6s]") == [
        "*** FIRST TURN *** [2c 7h 9d] [3s]", "*** FIRST RIVER *** [2c 7h 9d 3s] [4h]",
        "*** SECOND TURN *** [2c 7h 9d] [Qh]", "*** SECOND RIVER *** [2c 7h 9d Qh] [4c]",
        "*** THIRD TURN *** [2c 7h 9d] [5s]", "*** THIRD RIVER *** [2c 7h 9d 5s] [6s]"]
    assert "Hand was run three times" in lines and "THIRD Board [2c 7h 9d 5s 6s]" in lines
    collected = [line for line in lines if " collected " in line]
    # each odd unit is counted on the first run its receiver won
    assert collected == ["seat1 collected 667 from pot", "seat2 collected 667 from pot", "seat1 collected 666 from pot"]
    assert [r["street"] for r in ohh["rounds"]] == ["Preflop", "Flop", "Turn", "River", "Turn", "River", "Turn",
                                                    "River", "Showdown"]


def test_a_side_pot_run_twice_pays_the_main_pot_in_the_first_showdown_only():
    """CA Actions 8e: only the side pot was agreed: the main pot is collected in the first showdown alone."""
    hand = BettingHand(NLHE, [1, 2, 3], 1, {1: 300, 2: 1000, 3: 1000}, (50, 100))
    all_in(hand, [1, 2, 3])
    finish(hand)
    hole = {1: ["As", "Ad"], 2: ["Ks", "Kd"], 3: ["Qs", "Qd"]}
    boards = [["2c", "7h", "9d", "3s", "4h"], ["Qh", "7c", "9s", "3d", "4c"]]
    _result, record, _ohh = record_of(hand, hole, boards, runs=2, run_pots=[1])
    text = to_pokerstars(record)
    first = between(text, "*** FIRST SHOW DOWN ***", "*** SECOND SHOW DOWN ***")
    second = between(text, "*** SECOND SHOW DOWN ***", "*** SUMMARY ***")
    assert [line for line in first if "collected" in line] == ["seat2 collected 700 from side pot",
                                                               "seat1 collected 900 from main pot"]
    assert [line for line in second if "collected" in line] == ["seat3 collected 700 from side pot"]


def test_a_double_board_writes_both_boards_of_every_street_and_the_betting_once():
    """CA GR 14.1: two boards every hand, the pot divided equally; PokerStars has no double-board game, so the
    boards are written with its run-twice words, the betting once on each street, without "Hand was run twice"."""
    hand = BettingHand(PLO, [1, 2], 2, {1: 1000, 2: 1000}, (50, 100))
    assert hand.declare(2, "call").ok and hand.push(2, [50]).ok
    assert hand.check(1).ok and hand.end_street().ok
    assert hand.declare(1, "bet", 100).ok and hand.push(1, [100]).ok
    assert hand.declare(2, "call").ok and hand.push(2, [100]).ok
    finish(hand)
    hole = {1: ["Ks", "Kd", "2h", "3h"], 2: ["Qs", "Qd", "8h", "8c"]}
    boards = [["2c", "7h", "9d", "3s", "4h"], ["Qh", "7c", "9s", "3d", "4c"]]
    result, record, ohh = record_of(hand, hole, boards, double_board=True)
    assert result.payouts == {1: 200, 2: 200}
    lines = to_pokerstars(record).splitlines()
    flop = lines.index("*** FIRST FLOP *** [2c 7h 9d]")
    assert lines[flop:flop + 4] == ["*** FIRST FLOP *** [2c 7h 9d]", "*** SECOND FLOP *** [Qh 7c 9s]",
                                    "seat1: bets 100", "seat2: calls 100"]
    assert "*** SECOND TURN *** [Qh 7c 9s] [3d]" in lines and "Hand was run twice" not in lines
    assert "SECOND Board [Qh 7c 9s 3d 4c]" in lines
    flop_rounds = [r for r in ohh["rounds"] if r["street"] == "Flop"]
    assert [len(r["actions"]) for r in flop_rounds] == [2, 0] and ohh["flags"] == ["Run_It_Twice"]


def test_a_bomb_pot_is_written_with_every_players_ante_and_no_betting_before_the_flop():
    """CA GR 14.3: every player's agreed amount goes in like an ante, and nobody bets before the flop."""
    hand = BettingHand(NLHE, [1, 2, 3], 3, {s: 1000 for s in (1, 2, 3)}, (50, 100), bomb_pot=100)
    finish(hand)
    hole = {1: ["Ks", "Kd"], 2: ["Qs", "Qd"], 3: ["Js", "Jd"]}
    board = ["2c", "7h", "9d", "3s", "4h"]
    result = award(hand, hole, board)
    record = HandRecord(hand, hole, board, list(result.showdown_order), [(p.amount, p.shares) for p in result.pots],
                        "t-1", "43", table_size=6)
    lines = to_pokerstars(record).splitlines()
    assert [line for line in lines if "posts" in line] == [f"seat{s}: posts the ante 100" for s in (1, 2, 3)]
    preflop = lines[lines.index("*** HOLE CARDS ***") + 1: lines.index("*** FLOP *** [2c 7h 9d]")]
    assert preflop == ["seat1: checks", "seat2: checks", "seat3: checks"]
    ohh = to_ohh(record)["ohh"]
    assert [a["action"] for a in ohh["rounds"][0]["actions"]][:3] == ["Post Ante"] * 3
    assert "flags" not in ohh


@pytest.mark.parametrize("players, flip", [(2, False), (2, True), (4, False), (4, True)])
def test_a_bomb_pots_phh_replays_in_pokerkit_and_in_the_engine_to_the_same_stacks(players, flip):
    """The export rebuilds each hand from its PHH record: a bomb pot's (heads-up too, where PHH would otherwise
    write the blinds) replays in pokerkit and in the engine with no blinds, every ante, and the agreed amount."""
    pokerkit = pytest.importorskip("pokerkit")
    from controller import phh as phhlib  # noqa: PLC0415

    seats = list(range(1, players + 1))
    hand = BettingHand(NLHE, seats, players, {s: 1000 for s in seats}, (50, 100), bomb_pot=100, flip=flip)
    finish(hand)
    hole = {s: [f"{'AKQJ'[s - 1]}s", f"{'AKQJ'[s - 1]}d"] for s in seats}
    board = ["2c", "7h", "9d", "3s", "4h"]
    finishing = dict(award(hand, hole, board).finishing_stacks)
    text = phhlib.dumps(phhlib.to_phh(hand, hole, board, seats, finishing))
    assert "blinds_or_straddles = [" + ", ".join(["0"] * players) + "]" in text
    *_, state = pokerkit.HandHistory.loads(text)
    assert list(state.stacks) == [finishing[s] for s in hand.order]
    replayed, hole2, board2, _shown = phhlib.replay(phhlib.loads(text))
    assert (replayed.bomb_pot, replayed.flip, replayed.small_blind) == (100, flip, 50)
    assert dict(award(replayed, hole2, board2).finishing_stacks) == finishing


def test_seven_card_omaha_is_named_as_pokerstars_names_its_big_omaha_games():
    """PokerStars names Omaha by its hand size ("5 Card Omaha Pot Limit"): seven cards are "7 Card Omaha"; OHH's
    game type is Omaha; the shown hand uses exactly two hole cards."""
    from controller.betting import PLO7

    hand = BettingHand(PLO7, [1, 2, 3], 3, {s: 1000 for s in (1, 2, 3)}, (50, 100))
    assert hand.declare(3, "call").ok and hand.push(3, [100]).ok
    assert hand.declare(1, "call").ok and hand.push(1, [50]).ok
    assert hand.check(2).ok
    finish(hand)
    board = ["2s", "7s", "9s", "Js", "3d"]
    hole = {1: "As Kh Kd Qc 8h 4c 5d".split(), 2: "4s 5s 6h 6d Tc Th 8c".split(), 3: "Ah Ac 2h 3h Qd Qh 9c".split()}
    _result, record, ohh = record_of(hand, hole, [board])
    text = to_pokerstars(record)
    assert text.startswith("PokerStars Hand #42:  7 Card Omaha Pot Limit (50/100)")
    assert "seat2: shows [4s 5s 6h 6d Tc Th 8c] (a flush, Jack high)" in text
    assert ohh["game_type"] == "Omaha"


def test_a_history_as_the_table_writes_it_reads_back_as_toml_reads_it():
    """The table's own PHH texts are read without the TOML parser: the fields are exactly TOML's, and any text
    the writer would not have written (a float, a comment, an escape JSON has and TOML lacks) is TOML's to read."""
    import tomllib

    from controller import phh
    from sim.handgen import random_hands

    for hand in random_hands(60, seed=7):
        text = phh.dumps(hand)
        assert phh.loads(text) == tomllib.loads(text)
    assert phh.loads('stacks = [1.5, 2]\n') == {"stacks": [1.5, 2]}
    assert phh.loads('# a comment\nante = 1\n') == {"ante": 1}
    for not_toml in ('name = "a\\/b"\n', 'ante = 1\nante = 2\n', 'ante = null\n'):
        with pytest.raises(tomllib.TOMLDecodeError):
            phh.loads(not_toml)


def test_the_words_for_a_shown_hand_are_those_of_its_best_five_cards():
    """PokerStars' words for a shown hand come from the evaluator's rank of the whole hand (each rank put into
    words once); they must be the words of the best five-card candidate, in hold'em and in Omaha (two hole cards
    and three of the board, from four, five or six hole cards)."""
    import random
    from itertools import combinations

    from controller import pokerstars
    from controller.cards import FULL_DECK
    from controller.showdown import showdown_evaluator

    evaluate = showdown_evaluator()
    rng = random.Random(3)
    for _ in range(300):
        omaha, hole_count = rng.choice(((False, 2), (True, 4), (True, 5), (True, 6)))
        cards = rng.sample(FULL_DECK, hole_count + 5)
        hole, board = cards[:hole_count], cards[hole_count:]
        candidates = ([h + b for h in combinations(hole, 2) for b in combinations(board, 3)] if omaha
                      else list(combinations(cards, 5)))
        best = min(candidates, key=lambda five: evaluate(*five))
        assert pokerstars.describe(omaha, hole, board) == pokerstars.describe(False, best[:2], best[2:])
