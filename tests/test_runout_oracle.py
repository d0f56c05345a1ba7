"""pokerkit as an independent oracle for the games with several boards and for 7-card Omaha.

pokerkit 0.7.7 plays several runouts in cash-game mode (``Mode.CASH_GAME``: once nobody can act and streets are
left, every player in the hand is asked ``select_runout_count``; a consensus of N deals the remaining streets N
times, ``get_board_cards(i)`` being the i-th run), several boards from the start (``starting_board_count=2``: the
double board) and any Omaha hand size (a game class with ``hole_dealing_count = 7`` and Omaha's hand of exactly two
hole cards and three board cards). Seeded random hands that go all-in often — run twice or three times, on a double
board, at 7-card Omaha — are played in pokerkit and in the engine with the same actions; compared: whose turn and
the amount to call at every decision, each board's winners of each pot, and the finishing stacks.

Differences that are rulings, not bugs, are counted, never skipped: pokerkit gives the units a pot's division
between boards leaves over to the first board (and a tie's remainder to one winner); the table gives them to the
worse position, one each (CA Actions 8f; PP Ties 4). Where that happens the totals must still agree and no seat may
differ by more than the odd units.

Omaha hi-lo (plo8) run twice and on a double board: pokerkit splits each board's part of a pot between its high and
its eight-or-better low hand types (``tests/test_hilo_oracle.py``'s game), as the table does. Compared besides: each
board's high winners and low winners of each pot (pokerkit's ranking of the hands on that board). Its arithmetic
differs where the hi-lo oracle says it does (odd units; which halves exist, decided over the whole hand), so the
stacks are compared as there: the same, or the difference counted by its cause.
"""

from __future__ import annotations

import os
import random
import warnings
from collections import Counter

import pytest

pokerkit = pytest.importorskip("pokerkit")
pytest.importorskip("phevaluator")

from pokerkit import Automation, Mode, NoLimitTexasHoldem, PotLimitOmahaHoldem  # noqa: E402

from controller.betting import NLHE, PLO, PLO7, PLO8, BettingHand  # noqa: E402
from controller.cards import FULL_DECK  # noqa: E402
from controller.player_limits import max_players  # noqa: E402
from controller.rules import TDA  # noqa: E402
from controller.showdown import award  # noqa: E402
from mirrored import bet_or_raise_to, call_or_check, seat_to_act  # noqa: E402
from test_betting_oracle import CHIPS  # noqa: E402 (the same chips as the betting oracle's)
from test_hilo_oracle import PotLimitOmahaHiLo  # noqa: E402 (pokerkit's parts: high and eight-or-better low)

HANDS = int(os.environ.get("RUNOUT_ORACLE_HANDS", "200"))
HI_LO_HANDS = int(os.environ.get("RUNOUT_ORACLE_HILO_HANDS", "40"))
SEED = int(os.environ.get("RUNOUT_ORACLE_SEED", "20261201"))
AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING)


class PotLimitSevenCardOmaha(PotLimitOmahaHoldem):
    """7-card Omaha in pokerkit: its pot-limit Omaha with seven hole cards (OmahaHoldemHand: two hole, three board)."""

    hole_dealing_count = 7


GAMES = {NLHE: NoLimitTexasHoldem, PLO: PotLimitOmahaHoldem, PLO7: PotLimitSevenCardOmaha, PLO8: PotLimitOmahaHiLo}
KINDS = ("run twice", "run three times", "double board", "7-card Omaha run twice")
HI_LO_KINDS = ("plo8 run twice", "plo8 run three times", "plo8 double board")


def random_game(rng: random.Random, kinds: tuple[str, ...] = KINDS) -> dict:
    kind = rng.choice(kinds)
    variant = PLO7 if kind.startswith("7-card") else PLO8 if kind.startswith("plo8") else rng.choice([NLHE, PLO])
    runs = 3 if kind.endswith("run three times") else 1 if kind.endswith("double board") else 2
    # enough cards for every run: the 7-card deal of five players leaves 17, two full runs take 16
    most = min(max_players(variant.hole_cards), 5 if variant is PLO7 else 6)
    players = rng.randint(2, most)
    seats = sorted(rng.sample(range(1, 11), players))
    stacks = {s: rng.choice([rng.randint(150, 600), rng.randint(600, 3000)]) for s in seats}
    return {"kind": kind, "variant": variant, "runs": runs, "double_board": kind.endswith("double board"),
            "seats": seats, "button": rng.choice(seats), "stacks": stacks, "blinds": (25, 50)}


def play(rng: random.Random, stats: Counter, kinds: tuple[str, ...] = KINDS) -> None:
    g = random_game(rng, kinds)
    hand = BettingHand(g["variant"], g["seats"], g["button"], g["stacks"], g["blinds"], rules=TDA, chip_values=CHIPS)
    order = hand.order
    seat_of = dict(enumerate(order))
    index_of = {s: i for i, s in seat_of.items()}
    game = GAMES[g["variant"]]
    state = game.create_state(AUTOMATIONS, True, 0, g["blinds"], g["blinds"][1], [g["stacks"][s] for s in order],
                              len(order), mode=Mode.CASH_GAME, starting_board_count=2 if g["double_board"] else 1)
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole: dict[int, list[str]] = {s: [] for s in order}
    up_hands = None  # each board's hands, before pokerkit kills the hopeless ones
    while state.status:
        if state.can_deal_hole():
            card = deck.pop()
            hole[seat_of[state.hole_dealee_index]].append(card)
            state.deal_hole(card)
        elif state.can_burn_card():
            state.burn_card(deck.pop())
        elif state.can_deal_board():
            state.deal_board("".join(deck.pop() for _ in range(state.board_dealing_count)))
        elif state.can_select_runout_count():
            state.select_runout_count(g["runs"])  # every player agrees (CA Actions 8b)
        elif state.actor_index is not None:
            seat = seat_to_act(state, hand, seat_of)
            if seat is None:
                continue
            stats["decisions"] += 1
            can_raise = state.can_complete_bet_or_raise_to() and hand.min_raise_to() is not None
            choice = rng.choices(["all in", "call", "fold"], [55 if can_raise else 0, 35, 10])[0]
            if choice == "fold" and state.can_fold():
                state.fold()
                assert hand.fold(seat).ok
            elif choice == "all in":
                amount = state.max_completion_betting_or_raising_to_amount
                assert hand.max_bet_to() == amount
                bet_or_raise_to(state, hand, seat, amount)
            else:
                call_or_check(state, hand, seat)
        elif state.can_show_or_muck_hole_cards():
            state.show_or_muck_hole_cards(True)
        elif state.can_kill_hand() or state.can_push_chips():
            if up_hands is None:  # each board's hands of each hand type (high; low in the hi-lo games)
                up_hands = [[list(state.get_up_hands(i, k)) for k in range(len(game.hand_types))]
                            for i in state.board_indices]
            if state.can_kill_hand():
                state.kill_hand()
            else:
                state.push_chips()
        elif state.can_pull_chips():
            state.pull_chips()
        else:  # pragma: no cover
            raise AssertionError(f"pokerkit state with nothing to do: {state}")
    while hand.status == "betting":
        assert hand.end_street().ok
    pk_finish = {seat_of[i]: v for i, v in enumerate(state.stacks)}
    live = hand.live_seats
    if len(live) < 2:
        result = award(hand)
        assert dict(result.finishing_stacks) == pk_finish
        stats["won without a showdown"] += 1
        return
    boards = [[repr(c) for c in state.get_board_cards(i)] for i in state.board_indices]
    runs = g["runs"] if len(boards) > 1 and not g["double_board"] else 1
    assert len(boards) == (2 if g["double_board"] else runs), (g["kind"], boards)
    result = award(hand, hole, boards=boards, runs=runs, double_board=g["double_board"])
    hi_lo = g["variant"].hi_lo
    for pot in result.pots:  # each board's winners: pokerkit's hand evaluation on that board
        contenders = [s for s in pot.eligible if s in live]
        for part in pot.boards:
            high = up_hands[part.board][0]
            best = max(high[index_of[s]] for s in contenders)
            winners = {s for s in contenders if high[index_of[s]] == best}
            if not hi_lo:
                assert set(part.winners) == winners, (g["kind"], part)
                continue
            halves = {h.side: h for h in part.halves}
            assert set(halves["high"].winners) == winners, (g["kind"], part)
            low = up_hands[part.board][1]
            lows = [low[index_of[s]] for s in contenders if low[index_of[s]] is not None]
            if lows:
                assert set(halves["low"].winners) == {s for s in contenders if low[index_of[s]] == max(lows)}, part
                stats["plo8: board parts split high and low"] += 1
            else:
                assert set(halves) == {"high"}, (g["kind"], part)
                stats["plo8: board parts without a low, the high hand scoops"] += 1
    assert sum(result.finishing_stacks.values()) == sum(pk_finish.values()) == sum(g["stacks"].values())
    if dict(result.finishing_stacks) == pk_finish:
        stats[f"{g['kind']}: the same stacks"] += 1
    elif hi_lo:
        # pokerkit's hi-lo arithmetic (tests/test_hilo_oracle.py): odd units, and a pot's "low half" where another
        # board or pot has a low; the winners above agree
        no_low = any(len(part.halves) == 1 for pot in result.pots for part in pot.boards)
        if not no_low:  # then only the odd units differ: by at most one unit each
            odd = sum(len(p.odd_chips) for p in result.pots)
            assert all(abs(result.finishing_stacks[s] - pk_finish[s]) <= odd * CHIPS[0] for s in order), (
                g["kind"], result, pk_finish)
        stats[f"{g['kind']}: stacks differ by pokerkit's " + ("low half where a board has no low" if no_low else
                                                               "odd units")] += 1
    else:
        odd = sum(len(p.odd_chips) for p in result.pots) + sum(len(b.odd_chips) for p in result.pots for b in p.boards)
        assert odd, (g["kind"], result, pk_finish)
        assert all(abs(result.finishing_stacks[s] - pk_finish[s]) <= odd for s in order)
        rule = "the house's odd-chip rule" if g["double_board"] else "the worse position (CA Actions 8f)"
        stats[f"{g['kind']}: odd chips by {rule}, not to pokerkit's first board"] += 1
    if any(len({p.winners for p in pot.boards}) > 1 for pot in result.pots):
        stats["pots won on different boards by different players"] += 1


@pytest.mark.slow
def test_hi_lo_runouts_and_double_boards_agree_with_pokerkit():
    """Omaha hi-lo run twice, three times and on a double board: each board's high and low winners of every pot."""
    rng = random.Random(SEED + 8)
    stats: Counter = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(HI_LO_HANDS):
            play(rng, stats, HI_LO_KINDS)
    print(f"\nhi-lo runout oracle: {HI_LO_HANDS} hands, {dict(stats)}")
    assert stats["plo8: board parts split high and low"] >= 10 and stats["plo8: board parts without a low, the high "
                                                                           "hand scoops"] >= 5, stats


@pytest.mark.slow
def test_runouts_double_boards_and_seven_card_omaha_agree_with_pokerkit():
    rng = random.Random(SEED)
    stats: Counter = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a pokerkit warning (duplicate card, odd state) is a failure
        for _ in range(HANDS):
            play(rng, stats)
    print(f"\nrunout oracle: {HANDS} hands, {dict(stats)}")
    kinds = ("run twice", "run three times", "double board", "7-card Omaha run twice")
    assert all(any(k.startswith(kind) and "stacks" in k for k in stats) for kind in kinds), stats
    assert stats["pots won on different boards by different players"] >= 20, stats
