"""pokerkit as the oracle of stud betting read from the chips: random legal hands of Seven Card Stud, Stud hi-lo and
Razz played by pokerkit (antes, the bring-in or a completion, random checks, calls, bets, raises and folds, all-ins
of short stacks), dealt card by card on the simulated stud table with their chips (sim/stud_hands.py:
``deal_with_chips``), read with and without RF noise, and read back from the table's events.

Compared on every hand: every action with the chips it added (the bring-in, the completions, bets and raises, the
checks nobody sees, the calls and the folds), no bet ruling and no chip count, and the finishing stacks of the
showdown against pokerkit's payoffs (a split pot may differ by its odd chips, which the table gives by the cards:
TDA 20-2; tests/test_stud_oracle.py counts those). The counts over more hands come from
``python -m sim.stud_hands`` (see docs/chips.md, "Stud").
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("pokerkit")

from sim.noise import NoiseModel  # noqa: E402
from sim.stud_hands import GAMES, play_with_chips, pokerkit_finishing, random_stud_hand  # noqa: E402

SEED = 20261204


def check(hand, got: dict) -> None:
    assert got["actions"] == hand.actions
    assert got["problems"] == []
    theirs = pokerkit_finishing(hand)
    if got["finishing"] != theirs:  # a split pot: odd chips by the cards (TDA 20-2), each pot on its own (TDA 20-5)
        assert got["split_pots"] and sum(got["finishing"].values()) == sum(theirs.values()), (got, theirs)


@pytest.mark.parametrize("game", GAMES)
def test_stud_hands_bet_with_chips_read_back_as_pokerkit_played_them(game):
    rng = random.Random(f"{SEED}-{game}")
    for i in range(6):
        hand = random_stud_hand(rng, game)
        check(hand, play_with_chips(hand, NoiseModel.realistic(0.05, seed=i) if i == 0 else None))


def test_eight_players_to_seventh_street_share_the_burn_card_dealt_again_as_the_community_card():
    """The simulator's own stud hand (``engine_stud_hand``): eight players see seventh street, the deck is empty after
    its burn, and the dealer turns the burn card up on the board as the one community card. The hand is read back as
    the engine played it."""
    from sim.stud_hands import engine_stud_hand  # noqa: PLC0415

    seats = list(range(1, 9))
    hand = engine_stud_hand(random.Random(203), "razz", seats, {s: 4000 for s in seats}, (1, 2, 5, 10))
    burns = [card for kind, card, _ in hand.moves if kind == "burn"]
    assert [card for kind, card, _ in hand.moves if kind == "board"] == burns[-1:]
    check(hand, play_with_chips(hand))
