"""pokerkit as the oracle for the stud games: Seven Card Stud (stud), Stud hi-lo eight or better (stud8) and Razz.

pokerkit 0.7.7 plays them as ``FixedLimitSevenCardStud``, ``FixedLimitSevenCardStudHighLowSplitEightOrBetter`` and
``FixedLimitRazz``. Seeded random hands of 2 to 7 players (eight would run the deck short), stacks from short to
deep (side pots, all-ins), are dealt the same cards and played with the same actions in pokerkit and in the engine.
Compared: the bring-in seat and who acts first on each later street (``controller.stud`` from the cards showing,
pokerkit's opener), whose turn, the bring-in, the amount to call and the completion, bet and raise amounts at every
decision; at the end the finishing stacks.

The engine is asked with the house's open-pair big bet off (pokerkit does not offer it: ``start_street`` without
``open_pair``) and the raises capped heads-up too (TDA 48, as pokerkit). Differences that are rulings or pokerkit's
arithmetic are counted, never skipped:
* odd chips: pokerkit gives a remainder to one winner by its seat order; the table one each by the cards (TDA 20-2);
* pokerkit pools pots the same hands contest; the table divides each pot on its own (TDA 20-5);
* a stud8 side pot with no low in a hand where another pot has one: pokerkit pays its low half anyway (as in the
  hi-lo flop games' oracle).

``STUD_ORACLE_HANDS`` (default 10 per game, the fast run) and ``STUD_ORACLE_SEED`` change the run; the slow test
plays ``STUD_ORACLE_SLOW_HANDS`` (default 300) per game.
"""

from __future__ import annotations

import os
import random
import time
import warnings
from collections import Counter

import pytest

pokerkit = pytest.importorskip("pokerkit")
pytest.importorskip("phevaluator")

from pokerkit import (Automation, FixedLimitRazz, FixedLimitSevenCardStud,  # noqa: E402
                      FixedLimitSevenCardStudHighLowSplitEightOrBetter, HandHistory)

from controller import phh, stud  # noqa: E402
from controller.betting import RAZZ, STUD, STUD8, BettingHand  # noqa: E402
from controller.cards import FULL_DECK  # noqa: E402
from controller.rules import TDA  # noqa: E402
from controller.showdown import award  # noqa: E402
from mirrored import bet_or_raise_to, call_or_check  # noqa: E402
from test_betting_oracle import CHIPS, chips_for  # noqa: E402 (the same chips as the betting oracle's)

HANDS = int(os.environ.get("STUD_ORACLE_HANDS", "10"))
SLOW_HANDS = int(os.environ.get("STUD_ORACLE_SLOW_HANDS", "300"))
SEED = int(os.environ.get("STUD_ORACLE_SEED", "20261203"))
AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING,
               Automation.CARD_BURNING, Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING,
               Automation.CHIPS_PUSHING, Automation.CHIPS_PULLING)
GAMES = {STUD: FixedLimitSevenCardStud, STUD8: FixedLimitSevenCardStudHighLowSplitEightOrBetter,
         RAZZ: FixedLimitRazz}
LIMITS = ((1, 2, 5, 10), (2, 5, 10, 20), (5, 10, 25, 50), (10, 25, 50, 100))  # ante, bring-in, small, big bet


def showing(hole: list[str]) -> list[str]:
    """The up cards among a seat's cards in dealing order: the third to the sixth."""
    return hole[2:6]


def open_street(hand: BettingHand, hole: dict[int, list[str]]) -> int:
    """Open the hand's street from the cards (controller.stud), as the table does; returns the first seat."""
    live = hand.live_seats
    if hand.street_index == 0:
        first = stud.bring_in_seat({s: hole[s][2] for s in live}, hand.variant.stud)
    else:
        first = stud.first_to_act({s: showing(hole[s])[: hand.street_index + 1] for s in live}, hand.variant.stud,
                                  hand.order)
    assert hand.start_street(first).ok
    return first


def catch_up(hand: BettingHand, hole: dict[int, list[str]], street: int, dealt: bool) -> None:
    """Bring the engine to pokerkit's street: collect finished rounds, open the streets whose cards are out."""
    while hand.status == "betting":
        if hand.awaiting_opener:
            if hand.street_index > street or (hand.street_index == street and not dealt):
                return
            open_street(hand, hole)
        elif hand.street_index < street and hand.round_complete():
            assert hand.end_street().ok
        else:
            return


def pay(hand: BettingHand, seat: int) -> bool:
    """The chips a declaration owes, pushed."""
    owed = hand.seat_state(seat)["owed"]
    return not owed or hand.push(seat, chips_for(owed)).ok


def play(variant, rng: random.Random, stats: Counter) -> dict:
    """One hand in pokerkit and the engine."""
    n = rng.randint(2, 7)
    seats = list(range(1, n + 1))
    ante, bring_in, small, big = rng.choice(LIMITS)
    stacks = {s: rng.choice([rng.randint(small * 2, small * 8), rng.randint(small * 8, small * 40), small * 20,
                             rng.randint(ante + 1, ante + bring_in + small)])  # all-in bringing it in, or soon after
              for s in seats}
    hand = BettingHand(variant, seats, n, stacks, (0, 0), ante=ante, bets=(small, big), bring_in=bring_in,
                       rules=TDA, chip_values=CHIPS, event_heads_up=False)
    order = hand.order
    assert order == seats  # the dealer is the last seat: the first seat is on the dealer's left
    seat_of = dict(enumerate(order))
    index_of = {s: i for i, s in seat_of.items()}
    state = GAMES[variant].create_state(AUTOMATIONS, True, ante, bring_in, small, big, [stacks[s] for s in order], n)
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole: dict[int, list[str]] = {s: [] for s in order}
    compared: set[int] = set()
    while state.status:
        if state.can_deal_hole():
            card = deck.pop()
            hole[seat_of[state.hole_dealee_index]].append(card)
            state.deal_hole(card)
        elif state.actor_index is not None:
            catch_up(hand, hole, state.street_index, dealt=True)
            seat = seat_of[state.actor_index]
            assert hand.street_index == state.street_index
            if hand.street_index not in compared:  # (pokerkit's opener is the last aggressor once one bets)
                compared.add(hand.street_index)
                assert index_of[hand.openers[hand.street_index]] == state.opener_index, (variant.code, hole)
                stats["streets opened as pokerkit (bring-in, first to act)"] += 1
            assert hand.to_act() == seat, (variant.code, hand.to_act(), seat)
            stats["decisions"] += 1
            legal = hand.legal(seat)
            if state.can_post_bring_in():
                assert legal is not None and (legal.to_call, legal.min_to, legal.max_to, legal.can_fold) == (
                    state.effective_bring_in_amount, state.min_completion_betting_or_raising_to_amount,
                    state.max_completion_betting_or_raising_to_amount, False)
                if rng.random() < 0.7:
                    state.post_bring_in()
                    assert hand.declare(seat, "bring_in").ok and pay(hand, seat)
                    assert hand.actions[-1].kind == "bring_in"
                    stats["bring-ins"] += 1
                else:
                    amount = state.min_completion_betting_or_raising_to_amount
                    state.complete_bet_or_raise_to()
                    assert hand.declare(seat, "complete").ok and pay(hand, seat)
                    assert hand.bets[seat] == amount
                    stats["completions by the bring-in seat"] += 1
                continue
            assert hand.to_call(seat) == state.checking_or_calling_amount, (variant.code, seat)
            pk_raise = state.can_complete_bet_or_raise_to()
            my_min = hand.min_raise_to()
            agree = pk_raise and my_min is not None
            if pk_raise != (my_min is not None):
                assert any(v == 0 for v in state.stacks), (seat, variant.code)  # a short all-in: TDA 47
                stats["raise permission differs after a short all-in (TDA 47)"] += 1
            elif agree and (my_min, hand.max_bet_to()) != (state.min_completion_betting_or_raising_to_amount,
                                                           state.max_completion_betting_or_raising_to_amount):
                # a short all-in raised less than a full bet: the engine raises from the last full bet (TDA 47-2)
                assert any(v == 0 for v in state.stacks), (seat, variant.code)
                stats["raise bounds differ after a short all-in (TDA 47-2): no raise"] += 1
                agree = False
            roll = rng.random()
            if agree and roll < 0.3:
                bet_or_raise_to(state, hand, seat, my_min)
                stats["bets, completions and raises"] += 1
            elif roll < 0.45 and hand.to_call(seat):
                state.fold()
                assert hand.fold(seat).ok
            else:
                call_or_check(state, hand, seat)
        else:  # pragma: no cover - the automations leave nothing else
            raise AssertionError(f"pokerkit state with nothing to do: {state}")
    catch_up(hand, hole, len(variant.streets), dealt=True)
    while hand.status == "betting":
        assert hand.end_street().ok
        if hand.awaiting_opener:
            open_street(hand, hole)
    pk_finish = {seat_of[i]: v for i, v in enumerate(state.stacks)}
    live = hand.live_seats
    result = award(hand, hole if len(live) > 1 else None)
    assert sum(result.finishing_stacks.values()) == sum(pk_finish.values()) == sum(stacks.values())
    stats["hands"] += 1
    if len(live) > 1:
        stats["showdowns"] += 1
    if dict(result.finishing_stacks) == pk_finish:
        stats["the same stacks as pokerkit"] += 1
    else:
        odd = sum(len(p.odd_chips) for p in result.pots)
        contested = [p for p in result.pots if len([s for s in p.eligible if s in live]) > 1]
        no_low_side_pot = variant.hi_lo and any(len(p.halves) == 1 for p in contested) and any(
            len(p.halves) == 2 for p in contested)
        assert odd or len(contested) > 1, (variant.code, result, pk_finish, {s: hole[s] for s in live})
        assert all(abs(result.finishing_stacks[s] - pk_finish[s]) <= odd + len(result.pots) * 2 or no_low_side_pot
                   for s in order), (variant.code, result, pk_finish, hole)
        stats["odd chips by the cards (TDA 20-2), pooled pots or a side pot without a low: not pokerkit's"] += 1
    shown = list(result.showdown_order) if len(live) > 1 else []
    record = phh.to_phh(hand, hole, (), shown, result.finishing_stacks)
    return {"variant": variant, "phh": phh.dumps(record), "finish": dict(result.finishing_stacks),
            "pk_finish": pk_finish}


def run(hands: int) -> tuple[dict[str, Counter], float]:
    """Play the hands; each is then written as PHH and read back by pokerkit (to its own finishing stacks) and by
    the engine (to the table's)."""
    rng = random.Random(SEED)
    stats = {v.code: Counter() for v in GAMES}
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns of cards dealt out of its own deck order
        for _ in range(hands):
            for variant in GAMES:
                h = play(variant, rng, stats[variant.code])
                states = list(HandHistory.loads(h["phh"]))
                assert dict(zip(phh.loads(h["phh"])["seats"], states[-1].stacks)) == h["pk_finish"], h["phh"]
                hand, hole, _board, _shown = phh.replay(phh.loads(h["phh"]))
                result = award(hand, hole if len(hand.live_seats) > 1 else None)
                assert dict(result.finishing_stacks) == h["finish"], h["phh"]
                stats[variant.code]["PHH read back the same by pokerkit and the engine"] += 1
    return stats, time.perf_counter() - started


def _check(stats: dict[str, Counter], hands: int) -> None:
    for code, counts in stats.items():
        assert counts["hands"] == hands
        assert counts["showdowns"] > 0 and counts["bring-ins"] > 0 and counts["completions by the bring-in seat"] > 0
        assert counts["the same stacks as pokerkit"] >= hands * 0.9, (code, dict(counts))


def test_the_stud_games_play_as_pokerkit_plays_them():
    stats, seconds = run(HANDS)
    print(f"\nstud oracle: {HANDS} hands per game in {seconds:.1f} s")
    for code, counts in stats.items():
        print(f"  {code}: {dict(counts)}")
    _check(stats, HANDS)


@pytest.mark.slow
def test_many_stud_hands_play_as_pokerkit_plays_them():
    stats, seconds = run(SLOW_HANDS)
    print(f"\nstud oracle: {SLOW_HANDS} hands per game in {seconds:.1f} s")
    for code, counts in stats.items():
        print(f"  {code}: {dict(counts)}")
    _check(stats, SLOW_HANDS)
