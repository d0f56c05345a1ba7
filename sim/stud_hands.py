"""Random, legal stud hands (``stud``, ``stud8``, ``razz``), played by pokerkit, and the same hands dealt on a
simulated cards-only stud table: the proof that the table reads a stud hand as it was dealt.

pokerkit plays the hand: antes, the bring-in or a completion, and random legal actions street by street, its own
rules saying whose turn it is and which cards are dealt up. The cards come from one seeded deck, dealt in pokerkit's
order (one round at a time from the first seat); a burn card precedes each of fourth to seventh street. A hand in
which the deck would run short on seventh street (seven players all staying) is drawn again: pokerkit reshuffles
the discards where the table deals a community card, so their hands would differ (``StudHand.redrawn`` counts them).

:func:`deal_on_table` lays the hand's cards on the table's antennas as a dealer would: down cards on ``seatN.cards``,
up cards on ``seatN.up``, burns on ``burn``, a folded hand's cards into the muck, and everything gathered at the end.
"""

from __future__ import annotations

import random
import warnings
from dataclasses import dataclass, field
from typing import Any

from controller.cards import FULL_DECK
from controller.domain import DomainEvent

GAMES = ("stud", "stud8", "razz")
STREETS = ("third", "fourth", "fifth", "sixth", "seventh")
SEATS = 8  # the example stud table's


@dataclass
class StudHand:
    """One hand as pokerkit played it."""

    game: str
    seats: list[int]  # in dealing order (pokerkit's players 0, 1, ...)
    moves: list[tuple[str, Any, Any]] = field(default_factory=list)  # ("deal", seat, (card, up)), ("burn", card,
    # None), ("fold", seat, street)
    hole: dict[int, list[tuple[str, bool]]] = field(default_factory=dict)  # seat → (card, up) as dealt
    folded: list[int] = field(default_factory=list)
    payoffs: dict[int, int] = field(default_factory=dict)  # seat → chips won or lost (pokerkit's)
    openers: dict[str, int] = field(default_factory=dict)  # street → the seat whose cards open it, by pokerkit (third:
    # the bring-in), on each street where anyone acted
    redrawn: int = 0  # hands drawn again before this one (the deck would have run short)


def _pokerkit_game(game: str):
    from pokerkit import (FixedLimitRazz, FixedLimitSevenCardStud,  # noqa: PLC0415 (the oracle, on demand)
                          FixedLimitSevenCardStudHighLowSplitEightOrBetter)
    return {"stud": FixedLimitSevenCardStud, "stud8": FixedLimitSevenCardStudHighLowSplitEightOrBetter,
            "razz": FixedLimitRazz}[game]


def random_stud_hand(rng: random.Random, game: str, players: tuple[int, int] = (2, 7)) -> StudHand:
    """A random legal hand of ``game`` with ``players`` (the fewest and the most) on random seats."""
    redrawn = 0
    while True:
        hand = _play(rng, game, players)
        if hand is not None:
            hand.redrawn = redrawn
            return hand
        redrawn += 1


def _play(rng: random.Random, game: str, players: tuple[int, int]) -> StudHand | None:
    from pokerkit import Automation  # noqa: PLC0415
    n = rng.randint(*players)
    seats = sorted(rng.sample(range(1, SEATS + 1), n))
    ante, bring_in, small, big = rng.choice([(1, 2, 5, 10), (5, 10, 20, 40), (25, 50, 200, 400)])
    stacks = [rng.choice([big * 3, big * 10, big * 40]) for _ in seats]
    automations = (Automation.ANTE_POSTING, Automation.BET_COLLECTION, Automation.BLIND_OR_STRADDLE_POSTING,
                   Automation.HOLE_CARDS_SHOWING_OR_MUCKING, Automation.HAND_KILLING, Automation.CHIPS_PUSHING,
                   Automation.CHIPS_PULLING)
    state = _pokerkit_game(game).create_state(automations, True, ante, bring_in, small, big, stacks, n)
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hand = StudHand(game, seats, hole={s: [] for s in seats})
    street = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while state.status:
            if state.can_burn_card():
                if len(deck) < 1 + sum(1 for s in state.statuses if s):
                    return None  # seventh street: not a card for every live seat
                card = deck.pop()
                state.burn_card("??")
                hand.moves.append(("burn", card, None))
                street += 1
            elif state.can_deal_hole():
                index = state.hole_dealee_index
                card = deck.pop()
                dealt = state.deal_hole(card)
                up = bool(dealt.statuses[0])
                seat = seats[index]
                hand.hole[seat].append((card, up))
                hand.moves.append(("deal", seat, (card, up)))
            elif state.actor_index is not None:
                _act(state, rng, hand, seats, STREETS[street])
            else:
                break
    hand.payoffs = {seat: int(p) for seat, p in zip(seats, state.payoffs)}
    return hand


def _act(state, rng: random.Random, hand: StudHand, seats: list[int], street: str) -> None:
    seat = seats[state.actor_index]
    hand.openers.setdefault(street, seats[state.opener_index])  # by the cards, though it be all-in
    roll = rng.random()
    if state.can_post_bring_in():
        if roll < 0.7 or not state.can_complete_bet_or_raise_to():
            state.post_bring_in()
        else:
            state.complete_bet_or_raise_to()
        return
    if state.can_complete_bet_or_raise_to() and roll < 0.2:
        state.complete_bet_or_raise_to()
    elif state.checking_or_calling_amount == 0 or roll < 0.8 or not state.can_fold():
        state.check_or_call()
    else:
        state.fold()
        hand.folded.append(seat)
        hand.moves.append(("fold", seat, street))


def pokerkit_winners(hand: StudHand) -> dict[str, list[int]]:
    """The seats whose cards win the showdown by pokerkit's hand ranking, high and (stud8) low, among the seats that
    did not fold; empty when one seat was left."""
    from pokerkit import EightOrBetterLowHand, RegularLowHand, StandardHighHand  # noqa: PLC0415
    live = [s for s in hand.seats if s not in hand.folded]
    if len(live) < 2:
        return {}

    def best(kind) -> list[int]:
        hands = {}
        for seat in live:
            try:
                hands[seat] = kind.from_game("".join(card for card, _up in hand.hole[seat]))
            except ValueError:  # no qualifying low
                continue
        top = max(hands.values(), default=None)
        return sorted(seat for seat, h in hands.items() if h == top)

    if hand.game == "razz":
        return {"high": best(RegularLowHand)}
    winners = {"high": best(StandardHighHand)}
    if hand.game == "stud8":
        winners["low"] = best(EightOrBetterLowHand)
    return winners


def random_stud_hands(count: int, seed: int = 0, games: tuple[str, ...] = GAMES) -> list[StudHand]:
    rng = random.Random(seed)
    return [random_stud_hand(rng, games[i % len(games)]) for i in range(count)]


# ---- the hand on the table ----------------------------------------------------------------------------

def stud_zones(seats: int = SEATS) -> dict[str, tuple[str, int]]:
    """The antennas of a stud table: each seat's down and up cards side by side (neighbours: the RF noise model's
    cross reads pass between them), the board (the community card), burn and muck."""
    zones: dict[str, tuple[str, int]] = {}
    for s in range(1, seats + 1):
        zones[f"seat{s}.cards"] = ("main", 2 * s - 1)
        zones[f"seat{s}.up"] = ("main", 2 * s)
    for i, name in enumerate(("board", "burn", "muck")):
        zones[name] = ("main", 2 * seats + 1 + i)
    return zones


def deal_on_table(driver, hand: StudHand, pace_s: float = 0.4) -> None:
    """Deal ``hand`` on ``driver`` (a ``sim.table_driver.TableDriver`` of :func:`stud_zones`), a move every
    ``pace_s``, then gather the cards and wait until the table has ended the hand."""
    cards_of: dict[int, list[str]] = {s: [] for s in hand.seats}
    for kind, what, detail in hand.moves:
        if kind == "deal":
            card, up = detail
            driver.put(card, f"seat{what}.{'up' if up else 'cards'}", seconds=pace_s)
            cards_of[what].append(card)
        elif kind == "burn":
            driver.put(what, "burn", seconds=pace_s)
        else:  # a fold: the seat's cards pushed into the muck
            driver.place(*cards_of[what], zone="muck")
            driver.run(pace_s)
    driver.run(1.0)
    driver.clear()
    for _ in range(100):
        if any(e.type == "hand_ended" for e in driver.run(0.5)):
            return
    raise AssertionError("the table did not end the hand")


def read_back(events: list[DomainEvent]) -> dict[str, Any]:
    """The last hand as the table published it on its secure feed: each seat's cards with their face, the folds."""
    hand = max(e.hand for e in events if e.hand is not None)
    mine = [e.payload(secure=True) for e in events if e.hand == hand]
    hole: dict[int, list[tuple[str, bool]]] = {}
    for e in mine:
        if e["type"] == "card_dealt":
            hole.setdefault(e["seat"], []).append((e["card"], e["up"]))
    ended = next(e for e in mine if e["type"] == "hand_ended")
    return {"hole": hole, "folded": [e["seat"] for e in mine if e["type"] == "fold"],
            "live": ended["live_seats"], "irregular": [e for e in mine if e["type"] == "irregular_card"],
            "openers": {e["street"]: e["seat"] for e in mine if e["type"] in ("bring_in", "first_to_act")}}
