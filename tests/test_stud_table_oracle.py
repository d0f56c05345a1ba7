"""pokerkit as the oracle of the stud deal: random legal hands of Seven Card Stud, Stud hi-lo and Razz, played by
pokerkit (antes, the bring-in or a completion, random actions), dealt card by card on the simulated cards-only stud
table (down cards on ``seatN.cards``, up cards on ``seatN.up``, a burn before each later street, folds into the
muck), read by the simulated reader with and without RF noise, and read back from the table's secure feed.

Compared on every hand: each seat's cards in the order dealt and whether each lies up or down (pokerkit's hole card
statuses), the folds, the live seats at the end, the bring-in seat and the seat that acts first on each later street
(pokerkit's first actor of each street), no irregularity, and the showdown: the winners by the table's ranking of
the cards it read (controller.showdown; stud8 high and low) are pokerkit's (its hand types' ranking). Hands where the deck would run short on seventh street
are drawn again (pokerkit reshuffles the discards where the table deals a community card): their number is counted.

``STUD_ORACLE_HANDS`` (default 20 per game) and ``STUD_NOISE_HANDS`` (8 per game) change the run.
"""

from __future__ import annotations

import os
import random
from collections import Counter

import pytest

pytest.importorskip("pokerkit")

from controller.betting import RAZZ, STUD, STUD8  # noqa: E402
from controller.cards import FULL_DECK  # noqa: E402
from controller.game import GameController  # noqa: E402
from controller.table import TableSetup  # noqa: E402
from hal.zones import DebounceSettings  # noqa: E402
from sim.noise import NoiseModel  # noqa: E402
from controller.showdown import hand_rank, low_rank  # noqa: E402
from sim.stud_hands import (GAMES, SEATS, deal_on_table, pokerkit_winners, random_stud_hand, read_back,  # noqa: E402
                            stud_zones)
from sim.table_driver import TableDriver  # noqa: E402

HANDS = int(os.environ.get("STUD_ORACLE_HANDS", "20"))
NOISY = int(os.environ.get("STUD_NOISE_HANDS", "8"))
SEED = 20261203
DECK = {f"E0040150C3{i + 1:06X}": card for i, card in enumerate(FULL_DECK)}
CARDS = DebounceSettings(2, 0.6, move_after_cycles=3)  # the example tables' card debouncing
# as the flop games' replayed table (sim/replay.py): arrivals in the order their tags were first read, and a floor
# between a tag at a zone's edge and one read through the next antenna
ORDER_WINDOW_S, MIN_RSSI_DBM = 1.0, -60


def play(hand, noise: NoiseModel | None) -> dict:
    setup = TableSetup("stud-oracle", SEATS, DECK, hole_cards=7, players=tuple(hand.seats), variant=hand.game)
    driver = TableDriver(GameController(setup), stud_zones(), deck=DECK, noise=noise, debounce=CARDS,
                         order_window_s=ORDER_WINDOW_S, min_rssi_dbm=MIN_RSSI_DBM)
    deal_on_table(driver, hand)
    return read_back(driver.events)


def table_winners(game: str, hole: dict[int, list[tuple[str, bool]]], live: list[int]) -> dict[str, list[int]]:
    """The showdown of the cards the table read, by the table's own ranking (controller.showdown)."""
    if len(live) < 2:
        return {}
    variant = {"stud": STUD, "stud8": STUD8, "razz": RAZZ}[game]
    cards = {seat: [card for card, _up in hole[seat]] for seat in live}

    def best(rank) -> list[int]:
        ranks = {seat: rank(variant, cards[seat], []) for seat in live}
        ranks = {seat: r for seat, r in ranks.items() if r is not None}
        return sorted(seat for seat, r in ranks.items() if r == min(ranks.values()))

    winners = {"high": best(hand_rank)}
    if game == "stud8":
        winners["low"] = best(low_rank)
    return winners


def check(hand, got: dict) -> None:
    assert got["hole"] == hand.hole
    assert got["folded"] == hand.folded
    assert got["live"] == sorted(set(hand.seats) - set(hand.folded))
    assert got["irregular"] == []
    assert {street: got["openers"][street] for street in hand.openers} == hand.openers
    assert table_winners(hand.game, got["hole"], got["live"]) == pokerkit_winners(hand)


def hands(game: str, count: int, seed: int) -> list:
    rng = random.Random(f"{seed}-{game}")
    return [random_stud_hand(rng, game) for _ in range(count)]


@pytest.mark.parametrize("game", GAMES)
def test_a_hand_of_each_stud_game_is_read_back_as_pokerkit_dealt_it(game):
    [hand] = hands(game, 1, SEED)
    check(hand, play(hand, None))


@pytest.mark.slow
@pytest.mark.parametrize("game", GAMES)
def test_random_stud_hands_read_back_identical_with_and_without_rf_noise(game):
    counts = Counter()
    for i, hand in enumerate(hands(game, HANDS, SEED + 1)):
        noise = NoiseModel.realistic(0.05, seed=i) if i < NOISY else None
        check(hand, play(hand, noise))
        counts["noisy" if noise else "clean"] += 1
        counts["players"] += len(hand.seats)
        counts["redrawn"] += hand.redrawn
        counts["showdowns"] += len(hand.seats) - len(hand.folded) > 1
    print(f"{game}: {dict(counts)}")
    assert counts["noisy"] == min(NOISY, HANDS)
