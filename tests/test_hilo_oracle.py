"""pokerkit as the oracle for the hi-lo split games: Omaha hi-lo pot limit (plo8) and fixed limit (flo8), hold'em
hi-lo fixed limit (flhe8), eight or better.

pokerkit 0.7.7 splits a pot between hand types: its Omaha hi-lo ranks each hand with ``OmahaHoldemHand`` (high) and
``OmahaEightOrBetterLowHand`` (low). Its ``FixedLimitOmahaHoldemHighLowSplitEightOrBetter`` is built on the
pot-limit mixin, so the oracle's games are pokerkit's own parts put together: pot-limit Omaha, fixed-limit hold'em
with Omaha's four cards, and fixed-limit hold'em, each with a high and an eight-or-better low hand type.

Seeded random hands of 2 to 9 players with stacks from short to deep (side pots, all-ins) are played in pokerkit and
in the engine with the same actions. Compared: whose turn, the amount to call and the raise bounds at every
decision; at the end each pot's high winners and low winners (pokerkit's hand ranking of each eligible hand) and
the finishing stacks. The hands are then written as PHH, read back by pokerkit (FO/8) and by the engine, and played
on the simulated table (cards on the antennas, bets as chips) with and without RF noise: read back the same.

Differences that are rulings or pokerkit's arithmetic, counted and never skipped:
* odd chips: pokerkit gives a half's remainder to one winner; the table one each in the house's order (TDA 20-1)
  and a seat that had one in the high half last in the low half's order (PP Ties 4);
* a side pot none of whose hands has a low, in a hand where another hand has one: pokerkit decides which halves
  exist over the whole hand and pays that pot's "low half" to every hand eligible for it (all of them without a
  low tie at "no hand"); the table gives the whole pot to its high hand (each pot on its own: CA Actions 7; TDA 20-5;
  PP Ties 5d).

``HILO_ORACLE_HANDS`` (default 120 per game) and ``HILO_ORACLE_SEED`` change the run.
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

from pokerkit import (Automation, EightOrBetterLowHand, FixedLimitTexasHoldem, HandHistory,  # noqa: E402
                      OmahaEightOrBetterLowHand, OmahaHoldemHand, PotLimitOmahaHoldem, StandardHighHand)
from pokerkit.games import OmahaHoldemMixin  # noqa: E402

from controller import phh  # noqa: E402
from controller.betting import FIXED_LIMIT, FLHE8, FLO8, PLO8, BettingHand  # noqa: E402
from controller.cards import FULL_DECK  # noqa: E402
from controller.rules import TDA  # noqa: E402
from controller.showdown import award  # noqa: E402
from sim.replay import ReplayTable  # noqa: E402
from mirrored import bet_or_raise_to, call_or_check, seat_to_act  # noqa: E402
from test_betting_oracle import CHIPS  # noqa: E402 (the same chips as the betting oracle's)

HANDS = int(os.environ.get("HILO_ORACLE_HANDS", "120"))
SEED = int(os.environ.get("HILO_ORACLE_SEED", "20261203"))
PHYSICAL = int(os.environ.get("HILO_PHYSICAL_HANDS", "20"))  # per game, read from chips and cards
NOISY = int(os.environ.get("HILO_NOISE_HANDS", "8"))  # per game, with RF noise
AUTOMATIONS = (Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING)


class PotLimitOmahaHiLo(PotLimitOmahaHoldem):
    hand_types = (OmahaHoldemHand, OmahaEightOrBetterLowHand)


class FixedLimitOmahaHiLo(OmahaHoldemMixin, FixedLimitTexasHoldem):
    hand_types = (OmahaHoldemHand, OmahaEightOrBetterLowHand)


class FixedLimitHoldemHiLo(FixedLimitTexasHoldem):
    hand_types = (StandardHighHand, EightOrBetterLowHand)


GAMES = {PLO8: PotLimitOmahaHiLo, FLO8: FixedLimitOmahaHiLo, FLHE8: FixedLimitHoldemHiLo}


def _state(variant, g: dict, order: list[int]):
    sb, bb = g["blinds"]
    stacks = [g["stacks"][s] for s in order]
    if variant.structure == FIXED_LIMIT:
        return GAMES[variant].create_state(AUTOMATIONS, True, 0, (sb, bb), bb, 2 * bb, stacks, len(order))
    return GAMES[variant].create_state(AUTOMATIONS, True, 0, (sb, bb), bb, stacks, len(order))


def play(variant, rng: random.Random, stats: Counter) -> dict:
    """One hand in pokerkit and the engine; returns what the later checks need."""
    n = rng.randint(2, 9)
    seats = sorted(rng.sample(range(1, 11), n))
    sb, bb = rng.choice([(5, 10), (25, 50), (50, 100)])
    stacks = {s: rng.choice([rng.randint(bb * 2, bb * 15), rng.randint(bb * 15, bb * 80), bb * 20]) for s in seats}
    g = {"blinds": (sb, bb), "stacks": stacks}
    hand = BettingHand(variant, seats, rng.choice(seats), stacks, (sb, bb), rules=TDA, chip_values=CHIPS)
    order = hand.order
    seat_of = dict(enumerate(order))
    index_of = {s: i for i, s in seat_of.items()}
    state = _state(variant, g, order)
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole: dict[int, list[str]] = {s: [] for s in order}
    board: list[str] = []
    pushed_pots: set[int] = set()
    up = None  # pokerkit's high and low hands, before it kills the losers
    while state.status:
        if state.can_deal_hole():
            card = deck.pop()
            hole[seat_of[state.hole_dealee_index]].append(card)
            state.deal_hole(card)
        elif state.can_burn_card():
            state.burn_card(deck.pop())
        elif state.can_deal_board():
            cards = [deck.pop() for _ in range(state.board_dealing_count)]
            board += cards
            state.deal_board("".join(cards))
        elif state.actor_index is not None:
            seat = seat_to_act(state, hand, seat_of)
            if seat is None:
                continue
            stats["decisions"] += 1
            pk_raise = state.can_complete_bet_or_raise_to()
            my_min = hand.min_raise_to()
            agree = pk_raise and my_min is not None
            if agree and (my_min, hand.max_bet_to()) != (state.min_completion_betting_or_raising_to_amount,
                                                         state.max_completion_betting_or_raising_to_amount):
                # after a short all-in: the engine's reopening and completion rules (TDA 47-1), not pokerkit's
                assert any(v == 0 for v in state.stacks), (seat, variant)
                stats["raise bounds differ after a short all-in (TDA 47-1): no raise"] += 1
                agree = False
            elif pk_raise != (my_min is not None):
                if variant.structure == FIXED_LIMIT and my_min is not None and len(hand.live_seats) == 2:
                    stats["fixed limit heads-up: no cap on the raises (TDA 48; CA Actions 3), pokerkit caps"] += 1
                elif variant.structure == FIXED_LIMIT and my_min is None and hand.raise_count > TDA.limit_raise_cap:
                    # pokerkit's cap counts four raises besides the big blind: a fifth bet before the flop
                    stats["the cap: a bet and three raises (TDA 48), pokerkit's fifth bet pre-flop"] += 1
                else:
                    assert any(v == 0 for v in state.stacks), (seat, variant)
                    stats["raise permission differs after a short all-in (TDA 47-1): no raise"] += 1
            roll = rng.random()
            if agree and roll < 0.35:
                top = hand.max_bet_to()
                bet_or_raise_to(state, hand, seat,
                                top if rng.random() < 0.25 else rng.randint(my_min, max(my_min, min(top, my_min * 3))))
            elif roll < 0.47 and state.can_fold() and hand.to_call(seat):
                state.fold()
                assert hand.fold(seat).ok
            else:
                call_or_check(state, hand, seat)
        elif state.can_show_or_muck_hole_cards():
            state.show_or_muck_hole_cards(True)
        elif state.can_kill_hand() or state.can_push_chips():
            if up is None:
                up = [list(state.get_up_hands(0, k)) for k in range(2)]
            if state.can_kill_hand():
                state.kill_hand()
            else:
                pushed_pots.add(state.push_chips().pot_index)
        elif state.can_pull_chips():
            state.pull_chips()
        else:  # pragma: no cover
            raise AssertionError(f"pokerkit state with nothing to do: {state}")
    while hand.status == "betting":
        assert hand.end_street().ok
    pk_finish = {seat_of[i]: v for i, v in enumerate(state.stacks)}
    live = hand.live_seats
    result = award(hand, hole if len(live) > 1 else None, board)
    assert sum(result.finishing_stacks.values()) == sum(pk_finish.values()) == sum(stacks.values())
    stats["hands"] += 1
    odd = 0
    pokerkit_low_split = False
    if len(live) > 1:
        stats["showdowns"] += 1
        high, low = up
        any_low = any(low[index_of[s]] is not None for s in live)
        for pot in result.pots:
            contenders = [s for s in pot.eligible if s in live]
            if len(contenders) < 2:
                continue
            best_high = max(high[index_of[s]] for s in contenders)
            lows = [low[index_of[s]] for s in contenders if low[index_of[s]] is not None]
            halves = {h.side: h for h in pot.halves}
            assert set(halves["high"].winners) == {s for s in contenders if high[index_of[s]] == best_high}, pot
            if lows:
                best_low = max(lows)
                assert set(halves["low"].winners) == {s for s in contenders if low[index_of[s]] == best_low}, pot
                assert halves["high"].amount - halves["low"].amount == pot.amount % 2  # TDA 20-3 (unit 1)
                stats["pots split high and low"] += 1
                stats["pots quartered (two lows or more tie)"] += len(halves["low"].winners) > 1
                stats["odd chip to the high half (TDA 20-3)"] += pot.amount % 2
            else:
                assert set(halves) == {"high"} and halves["high"].amount == pot.amount, pot
                stats["pots without a low: the high hand scoops"] += 1
                pokerkit_low_split |= any_low
            stats["side pots at a showdown"] += pot.index > 0
            odd += sum(len(h.odd_chips) for h in pot.halves)
    if dict(result.finishing_stacks) == pk_finish:
        stats["the same stacks as pokerkit"] += 1
    elif pokerkit_low_split:
        stats["pokerkit pays a side pot's low half without a low"] += 1
    else:
        # pokerkit pools the pots that the same hands contest once the others are killed, and divides the pool;
        # the table divides each pot on its own (CA Actions 7; TDA 20-5; PP Ties 5d), an odd unit in each
        pooled = len(pushed_pots) < sum(1 for p in result.pots if len([s for s in p.eligible if s in live]) > 1)
        assert odd or pooled, (variant.code, result, pk_finish)
        assert all(abs(result.finishing_stacks[s] - pk_finish[s]) <= odd + len(result.pots) for s in order)
        stats["pokerkit pools pots the same hands contest; the table divides each (TDA 20-5)" if pooled else
              "odd chips one each (TDA 20-1; PP Ties 4), not pokerkit's to one winner"] += 1
    shown = list(result.showdown_order) if len(live) > 1 else []
    record = phh.to_phh(hand, hole, board, shown, result.finishing_stacks)
    return {"variant": variant, "phh": phh.dumps(record), "finish": dict(result.finishing_stacks),
            "pk_finish": pk_finish, "same": dict(result.finishing_stacks) == pk_finish}


@pytest.fixture(scope="module")
def oracle_run():
    rng = random.Random(SEED)
    stats = {v.code: Counter() for v in GAMES}
    hands: dict[str, list[dict]] = {v.code: [] for v in GAMES}
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns where it pays chips of hands without a low ("burned")
        for _ in range(HANDS):
            for variant in GAMES:
                hands[variant.code].append(play(variant, rng, stats[variant.code]))
    return stats, hands, time.perf_counter() - started


@pytest.mark.slow
def test_the_hi_lo_games_award_every_pot_as_pokerkit_ranks_the_hands(oracle_run):
    stats, _hands, seconds = oracle_run
    print(f"\nhi-lo oracle: {HANDS} hands per game in {seconds:.1f} s")
    for code, counts in stats.items():
        print(f"  {code}: {dict(counts)}")
    for code, counts in stats.items():
        assert counts["hands"] == HANDS
        if HANDS >= 100:  # the random hands reach every case of the split
            cases = ["pots split high and low", "pots without a low: the high hand scoops",
                     "odd chip to the high half (TDA 20-3)", "side pots at a showdown"]
            if code != "FLHE8":  # hold'em lows tie only where two hands hold the same low cards: rare
                cases.append("pots quartered (two lows or more tie)")
            for case in cases:
                assert counts[case] > 0, (code, case, dict(counts))


@pytest.mark.slow
def test_the_fixed_limit_omaha_hi_lo_hands_read_back_in_pokerkit_and_in_the_engine(oracle_run):
    """FO/8 is pokerkit's code for fixed-limit Omaha hi-lo: pokerkit reads the table's PHH and plays it to its own
    finishing stacks; the engine replays it to the table's."""
    _stats, hands, _seconds = oracle_run
    for h in hands["FLO8"]:
        states = list(HandHistory.loads(h["phh"]))
        assert dict(zip(phh.loads(h["phh"])["seats"], states[-1].stacks)) == h["pk_finish"]
    for h in hands["FLO8"] + hands["PLO8"] + hands["FLHE8"]:
        hand, hole, board, _shown = phh.replay(phh.loads(h["phh"]))
        assert dict(award(hand, hole if len(hand.live_seats) > 1 else None, board).finishing_stacks) == h["finish"]


@pytest.mark.slow
@pytest.mark.parametrize("noise", [0.0, 0.05])
def test_the_table_reads_the_hi_lo_hands_from_chips_and_cards(oracle_run, noise):
    """The oracle's hands played as physical table activity (cards on the antennas, bets pushed as chips) and read
    back by the controller: the actions and the finishing stacks of the award come out the same."""
    _stats, hands, _seconds = oracle_run
    table = ReplayTable(noise=noise, seed=5, pace_s=0.5, settle_s=0.4, deal_s=0.05) if noise else \
        ReplayTable(pace_s=0.5, settle_s=0.4, deal_s=0.05)
    count = NOISY if noise else PHYSICAL
    wrong = []
    started = time.perf_counter()
    for code, games in hands.items():
        for number, h in enumerate(games[:count]):
            result = table.replay(phh.loads(h["phh"]), f"{code} hand {number}")
            if not result.ok:
                wrong.append(f"{code} hand {number}: {result.reason}")
                continue
            read = result.reconstructed
            if dict(zip(read["seats"], read["finishing_stacks"])) != h["finish"]:
                wrong.append(f"{code} hand {number}: {read['finishing_stacks']}, the award gives {h['finish']}")
    print(f"\nhi-lo physical replay (noise {noise}): {count} hands per game in {time.perf_counter() - started:.1f} s, "
          f"{len(wrong)} wrong")
    assert not wrong, "\n".join(wrong[:10])
