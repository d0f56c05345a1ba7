"""Random, legal hold'em and Omaha hands as PHH hand histories: material for the replay and its benchmark. No-limit
hold'em and pot-limit Omaha by default; any variants of the engine on request (the hi-lo games: ``HI_LO``).

2–10 players on random seats of a ten-seat table, random blinds, antes or a big-blind ante, and stacks from very
short to deep so that short all-ins, several side pots and split pots occur. Each decision is a random legal one
(fold, check, call, a bet or raise anywhere between the minimum and the maximum, often all-in), made with the
betting engine as exact declared amounts. One seeded generator: a seed gives the same hands.
"""

from __future__ import annotations

import random
from typing import Any, Iterator, Sequence

from controller import phh as phhlib
from controller.betting import FLHE8, FLO8, NLHE, PLO, PLO8, BettingHand, Variant
from controller.cards import FULL_DECK
from controller.showdown import award

FLOP_GAMES = (NLHE, PLO)  # the default
HI_LO = (PLO8, FLO8, FLHE8)  # split high and low, eight or better


def random_setup(rng: random.Random, variants: Sequence[Variant] = FLOP_GAMES) -> dict[str, Any]:
    """A random table for one hand: seats, button, blinds, antes or a big-blind ante, stacks and the variant (one of
    ``variants``)."""
    n = rng.randint(2, 10)
    seats = sorted(rng.sample(range(1, 11), n))
    button = rng.choice(seats)
    sb, bb = rng.choice([(1, 2), (5, 10), (25, 50), (50, 100), (100, 200)])
    ante_kind = rng.choices(["none", "ante", "bba"], [55, 30, 15])[0]
    ante = max(1, bb // rng.choice([5, 10])) if ante_kind == "ante" else 0
    bba = bb if ante_kind == "bba" else 0
    stacks = {}
    for s in seats:
        shape = rng.random()
        if shape < 0.35:
            stack = rng.randint(bb + ante + bba + 1, bb * 12)
        elif shape < 0.8:
            stack = rng.randint(bb * 12, bb * 80)
        else:
            stack = rng.randint(bb * 80, bb * 400)
        if rng.random() < 0.25:  # equal stacks make ties and split side pots more likely
            stack = bb * 20
        stacks[s] = stack
    variant = rng.choice(list(variants))
    return {"variant": variant, "seats": seats, "button": button, "stacks": stacks, "blinds": (sb, bb),
            "ante": ante, "big_blind_ante": bba}


def random_hand(rng: random.Random, variants: Sequence[Variant] = FLOP_GAMES) -> dict[str, Any]:
    setup = random_setup(rng, variants)
    variant = setup["variant"]
    hand = BettingHand(variant, setup["seats"], setup["button"], setup["stacks"], setup["blinds"],
                       ante=setup["ante"], big_blind_ante=setup["big_blind_ante"])
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hole = {s: [deck.pop() for _ in range(variant.hole_cards)] for s in hand.order}
    board = [deck.pop() for _ in range(5)]
    play_randomly(hand, rng)
    result = award(hand, hole if hand.status == "showdown" else None, board)
    shown = list(result.showdown_order) if len(hand.live_seats) > 1 else []
    reached = _board_reached(hand)
    return phhlib.to_phh(hand, hole, board[:reached] if not shown else board, shown, result.finishing_stacks)


def play_randomly(hand: BettingHand, rng: random.Random, unit: int = 1) -> None:
    """Play a hand's betting to its end with random legal decisions, declared as exact amounts. Bets and raises are
    whole multiples of ``unit`` (the smallest chip) unless they are all-in."""
    while hand.status == "betting":
        seat = hand.to_act()
        if seat is None:
            if not hand.end_street().ok:
                raise RuntimeError("the engine refused to collect a complete round")
            continue
        legal = hand.legal(seat)
        roll = rng.random()
        if legal.can_raise and roll < 0.3:
            if rng.random() < 0.25:
                target = legal.max_to
            else:
                target = rng.randint(legal.min_to, max(legal.min_to, min(legal.max_to, legal.min_to * 3)))
                target = min(legal.max_to, -(-target // unit) * unit)
            ruling = hand.declare(seat, "bet" if hand.current_bet == 0 else "raise", target)
            if ruling.ok and hand.seat_state(seat)["owed"]:
                ruling = hand.push(seat, [hand.seat_state(seat)["owed"]])
        elif legal.can_check:
            ruling = hand.check(seat)
        elif roll < 0.75 or not legal.can_fold:
            ruling = hand.declare(seat, "call")
            if ruling.ok and hand.seat_state(seat)["owed"]:
                ruling = hand.push(seat, [hand.seat_state(seat)["owed"]])
        else:
            ruling = hand.fold(seat)
        if not ruling.ok:
            raise RuntimeError(f"generated an illegal action: {ruling.code} {ruling.message}")


def _board_reached(hand: BettingHand) -> int:
    streets = {a.street for a in hand.actions}
    return 5 if "river" in streets else 4 if "turn" in streets else 3 if "flop" in streets else 0


def random_hands(count: int, seed: int = 0, variants: Sequence[Variant] = FLOP_GAMES) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    for _ in range(count):
        yield random_hand(rng, variants)
